import { receiverFor, recipientDomain, type Keys, type SluiceConfig } from '@sluice/core';
import type { Layers } from './limiter.js';

/** A campaign's own limit (from its record, else `defaults.campaign`). */
export interface CampaignLimit {
  id: string;
  rate?: number | undefined;
  burst?: number | undefined;
}

/** What a message's layers depend on. */
export interface LayerSubject {
  to: string;
  tenantId: string;
  campaign?: CampaignLimit | undefined;
  /** Provider id; the config's `defaultProvider` when absent. */
  provider?: string | undefined;
}

/** The five quota layers of a message, from config (DESIGN.md, check order 5). */
export function quotaLayers(config: SluiceConfig, keys: Keys, subject: LayerSubject): { layers: Layers; provider: string; receiver: string } {
  const providerId = subject.provider ?? config.defaultProvider;
  const provider = config.providers[providerId];
  if (!provider) throw new Error(`unknown provider ${providerId}`);
  const receiver = receiverFor(config, recipientDomain(subject.to));
  const pool = config.pools[provider.pool] ?? {};
  const campaign = subject.campaign;
  const tenant = config.defaults.tenant;
  return {
    provider: providerId,
    receiver: receiver.name,
    layers: [
      { key: keys.bucket('provider', providerId), rate: provider.rate, burst: provider.burst },
      { key: keys.bucket('receiver', receiver.name), rate: receiver.rate, burst: receiver.burst },
      { key: keys.bucket('pool', provider.pool), rate: pool.rate, burst: pool.burst },
      campaign
        ? {
            key: keys.bucket('campaign', campaign.id),
            rate: campaign.rate ?? config.defaults.campaign.rate,
            burst: campaign.burst ?? config.defaults.campaign.burst,
          }
        : { key: keys.bucket('campaign', '-') },
      { key: keys.bucket('tenant', subject.tenantId), rate: tenant.rate, burst: tenant.burst },
    ],
  };
}
