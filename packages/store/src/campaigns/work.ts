import type { ChainableCommander, Redis } from 'ioredis';
import type { Keys } from '@sluice/core';
import { defineScripts } from '../redis/scripts.js';
import { pruneResult } from '../redis/results.js';

/**
 * The campaigns with work (docs/design/campaigns.md, The campaigns with work): the one owner of the sorted set
 * `keys.campaignsWithWork()` (id → mark). Everyone who adds a job to a campaign's queue marks
 * it after the add (the client's intake, the injection's chunk, before and after its MULTI, a worker's readmit);
 * a resume and a launch request mark it too. Every scheduler's poll reads this set, not every campaign, and
 * prunes a campaign whose queue it found empty only if its mark did not move since it read
 * it, so a job added while it looked keeps its campaign in the set.
 */
export interface CampaignWork {
  /** Marks campaigns as having work (one ZINCRBY each, in one round trip). */
  mark(ids: Iterable<string>): Promise<void>;
  /** The campaigns with work and their marks, as a poll reads them (one ZRANGE). */
  read(): Promise<Map<string, number>>;
  /** Whether one campaign is marked (one ZSCORE). */
  has(id: string): Promise<boolean>;
  /** Takes an idle campaign out unless its mark moved since `mark` was read; `true` when it did. */
  prune(id: string, mark: number): Promise<boolean>;
}

/** Adds a campaign's mark to a MULTI or pipeline of the caller's (the injection's chunk). */
export function markWork(multi: ChainableCommander, keys: Keys, id: string): void {
  multi.zincrby(keys.campaignsWithWork(), 1, id);
}

/** The campaigns with work on a connection of the caller's (not closed here). */
export function createCampaignWork(options: { redis: Redis; keys: Keys }): CampaignWork {
  const { keys } = options;
  const redis = defineScripts(options.redis);
  const key = keys.campaignsWithWork();
  return {
    async mark(ids) {
      const list = [...new Set(ids)];
      if (list.length === 0) return;
      // One alone without a pipeline: ioredis copies every script of the connection into each.
      if (list.length === 1) {
        await redis.zincrby(key, 1, list[0]!);
        return;
      }
      const pipe = redis.pipeline();
      for (const id of list) markWork(pipe, keys, id);
      await pipe.exec();
    },
    async read() {
      const flat = await redis.zrange(key, '0', '-1', 'WITHSCORES');
      const out = new Map<string, number>();
      for (let i = 0; i + 1 < flat.length; i += 2) out.set(flat[i]!, Number(flat[i + 1]));
      return out;
    },
    async has(id) {
      return (await redis.zscore(key, id)) !== null;
    },
    async prune(id, mark) {
      return pruneResult(await redis.sluicePruneWork(key, id, String(mark)));
    },
  };
}
