import type { Redis } from 'ioredis';
import { COMPACT_BLOCK, type Keys, type SluiceConfig } from '@sluice/core';
import type { Queues } from '../redis/queues.js';
import { CAMPAIGN_WINDOW, encodeWindow, finalCount } from './codec.js';
import { readCampaignCounts, readCampaignFields } from './read.js';

/**
 * The window of a campaign's injection (docs/design/campaigns.md, The window): how many of its
 * recipients Redis may hold. `ready` bounds those admission has not taken yet (they wait in
 * the campaign queue's list), `max` those not final. The scheduler writes both to the
 * campaign hash (`win:ready`, `win:max`) from the campaign's admitted rate and the fleet's
 * `injection` config ({@link createInjectionWindows}); until it has, the config's defaults apply.
 */
export interface InjectWindow {
  ready: number;
  max: number;
  /**
   * Recipients waiting for admission: the queue's wait, paused and prioritized lists (a block
   * job counted as `COMPACT_BLOCK`, the most it holds).
   */
  waiting: number;
  /** Recipients accepted and not final. */
  pending: number;
  /** The admitted rate the scheduler measured (recipients per second), 0 before it has. */
  rate: number;
}

/** The window before any scheduler has written one: `injection.minWindow` and `injection.maxWindow`'s defaults. */
export const DEFAULT_WINDOW = { ready: 2_000, max: 50_000 } as const;

/** Reads a campaign's window in one round trip (its commands side by side). */
export async function readWindow(redis: Redis, keys: Keys, queues: Queues, campaignId: string): Promise<InjectWindow> {
  const queue = queues.campaign(campaignId);
  // A paused queue's jobs wait in its paused list: they count as waiting too.
  const [row, counts, waiting, paused, prioritized] = await Promise.all([
    readCampaignFields(redis, keys, campaignId, CAMPAIGN_WINDOW),
    readCampaignCounts(redis, keys, campaignId),
    redis.llen(queue.keys.wait!),
    redis.llen(queue.keys.paused!),
    redis.zcard(queue.keys.prioritized!),
  ]);
  // A campaign written in blocks: a waiting job is taken as a whole block (the bound it is; a
  // chunk's edges and a recipient waiting alone make fewer).
  const perJob = row.blocks ? COMPACT_BLOCK : 1;
  return {
    ready: row.ready || DEFAULT_WINDOW.ready,
    max: row.max || DEFAULT_WINDOW.max,
    rate: row.rate,
    waiting: (waiting + paused + prioritized) * perJob,
    pending: Math.max(0, counts.accepted - finalCount(counts)),
  };
}

/** Whether `count` more recipients fit the window. */
export function fits(w: InjectWindow, count: number): boolean {
  return w.waiting + count <= Math.max(w.ready, count) && w.pending + count <= Math.max(w.max, count);
}

/**
 * The time constant of a campaign's measured rate: it follows a change by 63% in this long.
 * One second's count swings ±20% at a steady rate (a chunk, a collection, a busy core); a
 * window that followed it held the fastest few seconds of a run, so a longer run peaked higher
 * than a short one at the same rate. Averaged over about 20 s the swing is a few percent.
 */
export const RATE_TAU_MS = 20_000;

/**
 * Each campaign's injection window, written by the schedulers to the campaign hash every
 * campaign poll: `win:rate`, the rate its messages reach a final state (what admission let
 * through, averaged over about {@link RATE_TAU_MS}), `win:ready`, the recipients admission may
 * find waiting (`injection.aheadMs` of that rate, within `minWindow`…`maxWindow`), and
 * `win:max` (`maxWindow`). The producer reads them ({@link readWindow}).
 */
export interface InjectionWindows {
  /** Measures one campaign and writes its window. */
  update(campaignId: string, now: number): Promise<void>;
}

/** Creates the window keeper of one scheduler. */
export function createInjectionWindows(deps: { redis: Redis; keys: Keys; config: SluiceConfig }): InjectionWindows {
  const { redis, keys } = deps;
  const { aheadMs, minWindow, maxWindow } = deps.config.injection;
  const seen = new Map<string, { final: number; at: number; rate: number; written: string }>();

  return {
    async update(campaignId, now) {
      const final = finalCount(await readCampaignCounts(redis, keys, campaignId));
      const last = seen.get(campaignId);
      let rate = 0;
      if (last && now > last.at) {
        const measured = ((final - last.final) * 1000) / (now - last.at);
        // Weighted by the time since the last poll, so a late poll counts for what it covers.
        const weight = 1 - Math.exp(-(now - last.at) / RATE_TAU_MS);
        rate = last.rate === 0 ? measured : last.rate + weight * (measured - last.rate);
      }
      const ready = Math.min(maxWindow, Math.max(minWindow, Math.ceil((rate * aheadMs) / 1000)));
      const written = `${ready}|${rate.toFixed(1)}`;
      seen.set(campaignId, { final, at: now, rate, written });
      // An idle campaign's window is written once, a busy one's as it changes.
      if (written === last?.written) return;
      await redis.hset(keys.campaign(campaignId), encodeWindow({ ready, max: maxWindow, rate }));
    },
  };
}
