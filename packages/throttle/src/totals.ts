import type { Redis } from 'ioredis';
import type { Keys } from '@sluice/core';
import { defineScripts } from './internal/scripts.js';
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
 * the sums are added only if the totals still stop where this folder read them (in Lua), so
 * two folders never add the same bucket twice.
 */
export async function foldTotals(
  deps: { redis: Redis; keys: Keys; signals: Signals },
  providers: readonly string[],
  now = Date.now(),
): Promise<Totals> {
  const { redis, keys, signals } = deps;
  const upTo = signals.bucketOf(now - SETTLE_MS);
  const from = (await redis.hget(keys.opsOutcomes(), 'upTo')) ?? '0';
  if (upTo > Number(from)) {
    const add: Record<string, number> = {};
    for (const counts of await Promise.all(
      providers.map((name) => signals.sum({ kind: 'provider', name }, Number(from), upTo)),
    )) {
      for (const [f, n] of Object.entries(counts)) add[f] = (add[f] ?? 0) + n;
    }
    await defineScripts(redis).sluiceTotalsAdd(
      keys.opsOutcomes(),
      from,
      String(upTo),
      ...Object.entries(add).flat().map(String),
    );
  }
  const stored = await redis.hgetall(keys.opsOutcomes());
  const counts: Record<string, number> = {};
  for (const [f, v] of Object.entries(stored)) if (f !== 'upTo') counts[f] = Number(v);
  return { counts, upTo: Number(stored.upTo ?? upTo) };
}
