export { createClient, type ClientOptions, type SluiceClient, type SendResult, type Messages } from './client.js';
export {
  campaignInputSchema,
  parseCampaign,
  type Campaign,
  type CampaignInput,
  type CampaignStatus,
  type Campaigns,
} from './campaigns.js';
export { type ClientSuppressions } from './suppressions.js';
export type { AttemptEntry, MessageRecord, SuppressionEntry, SuppressionPage, SuppressionSource } from '@sluice/store';
export type { MessageInput } from '@sluice/core';
