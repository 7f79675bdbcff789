export {
  createClient,
  type ClientOptions,
  type SluiceClient,
  type SendOptions,
  type SendResult,
  type Messages,
} from './client.js';
export { type FleetCheck } from './fleet-check.js';
export { type Campaigns } from './campaigns.js';
export {
  campaignInputSchema,
  parseCampaign,
  type Campaign,
  type CampaignInput,
  type CampaignStatus,
  type LaunchDecision,
  type LaunchForecastInput,
  type LaunchGate,
  type LaunchOptions,
  type LaunchRecord,
  type ApproveOptions,
} from '@sluice/store';
export { type ClientSuppressions } from './suppressions.js';
export { type ClientOutcomes } from './outcomes.js';
export type {
  AttemptEntry,
  FleetProcess,
  FleetRole,
  FleetView,
  InjectCursor,
  InjectOptions,
  InjectProgress,
  InjectResult,
  InjectWindow,
  MessageRecord,
  OutcomeEvent,
  ReadOptions,
  SuppressionEntry,
  SuppressionPage,
  SuppressionSource,
} from '@sluice/store';
// What a backend types its code with: the error it catches (one class, from `@sluice/core`, so
// `instanceof` holds for every error the client throws) and the shapes `send` and `status` use.
export { SluiceError, type SluiceErrorCode, type ErrorAction } from '@sluice/core';
export type {
  CampaignContentInput,
  FinalState,
  MessageInput,
  MessageState,
  PriorityClass,
  RecipientInput,
} from '@sluice/core';
