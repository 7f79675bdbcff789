import { receiverFor, recipientDomain, type Keys, type ReceiverLimit, type SluiceConfig } from '@sluice/core';
import type { Adjustments } from './adjustments.js';
import type { LayerLimit, Layers } from './limiter.js';

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
  /**
   * The receiver bucket, when the caller already knows it: the scheduler resolves the
   * domain's organisation (DNS, async) first, and a worker takes the one on the job.
   * Absent: from config alone (`receiverFor`). Given here so this stays synchronous.
   */
  receiver?: ReceiverLimit | undefined;
}

/**
 * A layer at its effective rate: the configured one, lowered by backpressure. A key with
 * no rate of its own that gets throttled is lowered from `fallbackRate` (the provider's:
 * no receiver can get more than that).
 */
function effective(layer: LayerLimit, adjust: Pick<Adjustments, 'factor'> | undefined, fallbackRate?: number): LayerLimit {
  const factor = adjust?.factor(layer.key) ?? 1;
  const rate = layer.rate ?? fallbackRate;
  if (factor >= 1 || rate === undefined) return layer;
  const burst = layer.burst ?? Math.max(1, Math.round(rate / 10));
  return { key: layer.key, rate: rate * factor, burst: Math.max(1, Math.round(burst * factor)) };
}

/**
 * The five quota layers of a message, from config (DESIGN.md, check order 5), at their
 * effective rates when `adjust` is given: the provider's capped by its account limits,
 * and every throttled key lowered.
 */
export function quotaLayers(
  config: SluiceConfig,
  keys: Keys,
  subject: LayerSubject,
  adjust?: Pick<Adjustments, 'factor' | 'cap'>,
): { layers: Layers; provider: string; receiver: string } {
  const providerId = subject.provider ?? config.defaultProvider;
  const provider = config.providers[providerId];
  if (!provider) throw new Error(`unknown provider ${providerId}`);
  const receiver = subject.receiver ?? receiverFor(config, recipientDomain(subject.to));
  const pool = config.pools[provider.pool];
  const campaign = subject.campaign;
  const tenant = config.defaults.tenant;
  // The account's own limit (SES MaxSendRate) caps the rate, and the burst with it: a
  // burst above a per-second limit would be refused at once.
  const cap = adjust?.cap(providerId);
  const capped = cap !== undefined && cap < provider.rate;
  const providerRate = capped ? cap : provider.rate;
  const providerBurst = capped ? Math.max(1, Math.min(provider.burst ?? Math.round(cap / 10), Math.floor(cap))) : provider.burst;
  return {
    provider: providerId,
    receiver: receiver.name,
    layers: [
      effective({ key: keys.bucket('provider', providerId), rate: providerRate, burst: providerBurst }, adjust),
      effective({ key: keys.bucket('receiver', receiver.name), rate: receiver.rate, burst: receiver.burst }, adjust, providerRate),
      effective({ key: keys.bucket('pool', provider.pool), rate: pool?.rate, burst: pool?.burst }, adjust),
      campaign
        ? effective(
            {
              key: keys.bucket('campaign', campaign.id),
              rate: campaign.rate ?? config.defaults.campaign.rate,
              burst: campaign.burst ?? config.defaults.campaign.burst,
            },
            adjust,
            providerRate,
          )
        : { key: keys.bucket('campaign', '-') },
      effective({ key: keys.bucket('tenant', subject.tenantId), rate: tenant.rate, burst: tenant.burst }, adjust, providerRate),
    ],
  };
}
