import { receiverFor, recipientDomain, type Keys, type ReceiverLimit, type SluiceConfig } from '@sluice/core';
import type { Adjustments } from './adjustments/index.js';
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

/** What the layers read of the adjustments (`override` may be left out: no overrides). */
export type LayerAdjustments = Pick<Adjustments, 'factor' | 'cap'> & Partial<Pick<Adjustments, 'override'>>;

/**
 * A `rate` override in force replaces the layer's configured rate, with a burst of a tenth
 * of it (at least 1), or the configured burst when that is smaller: an operator lowering a
 * rate must not get a larger burst than before.
 */
function overridden(layer: LayerLimit, adjust: LayerAdjustments | undefined): LayerLimit {
  const o = adjust?.override?.(layer.key);
  if (o?.kind !== 'rate' || o.rate === undefined) return layer;
  const burst = Math.max(1, Math.round(o.rate / 10));
  return { key: layer.key, rate: o.rate, burst: layer.burst !== undefined ? Math.min(layer.burst, burst) : burst };
}

/**
 * A layer at its effective rate: the configured one (or an operator's rate override),
 * lowered by backpressure and the governor. A key with no rate of its own that gets
 * throttled is lowered from `fallbackRate` (the provider's: no receiver can get more than
 * that).
 */
function effective(configured: LayerLimit, adjust: LayerAdjustments | undefined, fallbackRate?: number): LayerLimit {
  const layer = overridden(configured, adjust);
  const factor = adjust?.factor(layer.key) ?? 1;
  const rate = layer.rate ?? fallbackRate;
  if (factor >= 1 || rate === undefined) return layer;
  const burst = layer.burst ?? Math.max(1, Math.round(rate / 10));
  return { key: layer.key, rate: rate * factor, burst: Math.max(1, Math.round(burst * factor)) };
}

/**
 * The five quota layers of a message, from config (docs/design/flow.md, check order), at their
 * effective rates when `adjust` is given: the provider's capped by its account limits,
 * and every throttled key lowered.
 */
export function quotaLayers(
  config: SluiceConfig,
  keys: Keys,
  subject: LayerSubject,
  adjust?: LayerAdjustments,
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
  // An operator's rate override stands in for the configured rate, but never above the cap.
  const providerKey = keys.bucket('provider', providerId);
  const { rate: ownRate, burst: ownBurst } = overridden(
    { key: providerKey, rate: provider.rate, burst: provider.burst },
    adjust,
  ) as { rate: number; burst?: number };
  const cap = adjust?.cap(providerId);
  const capped = cap !== undefined && cap < ownRate;
  const providerRate = capped ? cap : ownRate;
  const providerBurst = capped ? Math.max(1, Math.min(ownBurst ?? Math.round(cap / 10), Math.floor(cap))) : ownBurst;
  return {
    provider: providerId,
    receiver: receiver.name,
    layers: [
      // Already overridden above: the factor only.
      effective(
        { key: providerKey, rate: providerRate, burst: providerBurst },
        adjust && { factor: (k) => adjust.factor(k), cap: (p) => adjust.cap(p) },
      ),
      effective(
        { key: keys.bucket('receiver', receiver.name), rate: receiver.rate, burst: receiver.burst },
        adjust,
        providerRate,
      ),
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
      effective(
        { key: keys.bucket('tenant', subject.tenantId), rate: tenant.rate, burst: tenant.burst },
        adjust,
        providerRate,
      ),
    ],
  };
}
