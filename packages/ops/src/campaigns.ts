import type { Redis } from 'ioredis';
import type { Keys, SluiceConfig } from '@sluice/core';
import {
  createCampaigns,
  createQueues,
  createStore,
  type Campaigns,
  type CancelOptions,
  type CancelResult,
} from '@sluice/store';

/** What {@link cancelCampaign} needs: the fleet's config, a connection of the caller's and the key builders. */
export interface CancelCampaignDeps {
  config: SluiceConfig;
  redis: Redis;
  keys: Keys;
}

/** Options of {@link cancelCampaign}. */
export interface CancelCampaignOptions extends Omit<CancelOptions, 'waitMs'> {
  /**
   * How long to wait for sends that were already under way (state `sending` or `submitted`)
   * to end. Their requests may be with the ESP: they end as their answer says.
   * @defaultValue the longest provider `timeoutMs` plus 5 s
   */
  waitMs?: number;
}

/** What {@link cancelCampaign} did. */
export type CancelCampaignResult = CancelResult;

/**
 * Cancels a campaign for good with the fleet's settings (its records' TTL, its providers'
 * timeouts): `campaigns.cancel` of `@sluice/store`, which owns the campaign lifecycle and
 * keeps the order of docs/design/operations.md, "Campaign cancel". Nothing of the campaign is sent once this
 * returns with `stillInFlight` empty, and it can never be resumed.
 */
export async function cancelCampaign(
  deps: CancelCampaignDeps,
  id: string,
  options: CancelCampaignOptions,
): Promise<CancelCampaignResult> {
  const { redis, keys, config } = deps;
  const store = createStore({ redis, keys, recordTtlSeconds: config.delivery.recordTtlSeconds });
  const queues = createQueues({ redis, keys });
  const longest = Math.max(0, ...Object.values(config.providers).map((p) => p.timeoutMs));
  try {
    return await createCampaigns({ redis, keys, queues, store }).cancel(id, {
      ...options,
      waitMs: options.waitMs ?? longest + 5_000,
    });
  } finally {
    await queues.close();
  }
}

/** Options of {@link archiveCampaign} and {@link deleteCampaign}. */
export interface EndCampaignOptions {
  /** Who does it (audited). */
  actor: string;
}

/** Runs one call of the lifecycle with the fleet's settings, its queue handles closed after. */
async function withCampaigns<T>(deps: CancelCampaignDeps, run: (c: Campaigns) => Promise<T>): Promise<T> {
  const { redis, keys, config } = deps;
  const store = createStore({ redis, keys, recordTtlSeconds: config.delivery.recordTtlSeconds });
  const queues = createQueues({ redis, keys });
  try {
    return await run(
      createCampaigns({ redis, keys, queues, store, archivedRetentionMs: config.campaigns.archivedRetentionMs }),
    );
  } finally {
    await queues.close();
  }
}

/**
 * Archives a finished campaign with the fleet's retention (`campaigns.archive` of
 * `@sluice/store`): `campaign_not_finished` naming why if it is not. Resolves `false` if it
 * was archived already.
 */
export function archiveCampaign(deps: CancelCampaignDeps, id: string, options: EndCampaignOptions): Promise<boolean> {
  return withCampaigns(deps, (c) => c.archive(id, options));
}

/** Deletes an archived or finished campaign for good (`campaigns.delete` of `@sluice/store`). */
export function deleteCampaign(deps: CancelCampaignDeps, id: string, options: EndCampaignOptions): Promise<void> {
  return withCampaigns(deps, (c) => c.delete(id, options));
}
