import type { Redis } from 'ioredis';
import type { Keys } from '@sluice/core';
import type { Signals } from './signals.js';

/** Buckets this old are complete: workers write theirs four times a second. */
export const SETTLE_MS = 2_000;

/** Outcome totals since the counters began, and the bucket they are folded up to. */
export interface Totals {
  /** Per signal field (`attempted`, `accepted`, `deferred:<family>`, …), summed over providers. */
  counts: Record<string, number>;
  /** The totals hold every bucket that began before this (epoch ms). */
  upTo: number;
}

/**
 * Adds the providers' settled signal buckets to the outcome totals (`<prefix>:ops:outcomes`),
 * each bucket once, and returns the totals. Signals keep five minutes; the totals keep
 * everything. The governor's leader folds every tick, and any status reader may fold too:
 * a lock lets one folder at a time read from where the totals stop and move that mark.
 */
export async function foldTotals(deps: { redis: Redis; keys: Keys; signals: Signals }, providers: readonly string[], now = Date.now()): Promise<Totals> {
  const { redis, keys, signals } = deps;
  const upTo = signals.bucketOf(now - SETTLE_MS);
  const got = await redis.set(keys.opsOutcomesLock(), String(now), 'PX', 5_000, 'NX');
  if (got === 'OK') {
    try {
      const from = Number((await redis.hget(keys.opsOutcomes(), 'upTo')) ?? 0);
      if (upTo > from) {
        const add: Record<string, number> = {};
        for (const counts of await Promise.all(providers.map((name) => signals.sum({ kind: 'provider', name }, from, upTo)))) {
          for (const [f, n] of Object.entries(counts)) add[f] = (add[f] ?? 0) + n;
        }
        const m = redis.multi();
        for (const [f, n] of Object.entries(add)) m.hincrby(keys.opsOutcomes(), f, n);
        await m.hset(keys.opsOutcomes(), 'upTo', String(upTo)).exec();
      }
    } finally {
      await redis.del(keys.opsOutcomesLock());
    }
  }
  const stored = await redis.hgetall(keys.opsOutcomes());
  const counts: Record<string, number> = {};
  for (const [f, v] of Object.entries(stored)) if (f !== 'upTo') counts[f] = Number(v);
  return { counts, upTo: Number(stored.upTo ?? upTo) };
}
