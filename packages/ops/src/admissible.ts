import type { Redis } from 'ioredis';
import { PRIORITY_CLASSES, type Keys, type SluiceConfig } from '@sluice/core';
import type { Queues } from '@sluice/store';

/**
 * How many jobs one reading reads, over every dispatch queue and state, to split admissible work
 * over pools (each job's data is read whole): at least 4 a state of each queue, 16 with one
 * partition. With one pool there is nothing to split and none is read.
 */
export const ADMISSIBLE_SAMPLE = 256;

/** BullMQ's delayed score: the due time in ms times 0x1000, plus a counter below it. */
const DELAYED_SCORE_SCALE = 0x1000;

/**
 * A dispatch queue's **admissible work** by IP pool: the messages a worker could take now or
 * within the class's horizon. That is every job waiting (or prioritized), every job active (a
 * send in flight), and every delayed job due by `now + horizonMs` (a booked slot or a retry
 * whose wait ends within the horizon). Mail the limiter has not admitted is not in a dispatch
 * queue, so a backlog a receiver's limit holds adds only the slots it booked ahead: the figure
 * grows when workers fall behind what the limiter admits and shrinks as workers are added.
 *
 * The totals are exact (four counts). With one pool they are its; else the split comes from the
 * provider of up to `sample` jobs of each state, read from their data: exact up to that many, in
 * proportion beyond. Jobs whose provider is no longer configured (or that left the queue
 * meanwhile) count for `unknown`.
 */
export async function admissibleWork(
  redis: Redis,
  keys: Keys,
  config: SluiceConfig,
  queue: string,
  window: { horizonMs: number; now: number; sample: number },
): Promise<Map<string, number>> {
  const base = `${keys.prefix}:${queue}`;
  const dueScore = String((window.now + window.horizonMs + 1) * DELAYED_SCORE_SCALE - 1);
  const totals = await Promise.all([
    redis.llen(`${base}:wait`),
    redis.zcard(`${base}:prioritized`),
    redis.llen(`${base}:active`),
    redis.zcount(`${base}:delayed`, '-inf', dueScore),
  ]);
  const work = new Map<string, number>();
  const add = (pool: string, v: number): void => {
    if (v > 0) work.set(pool, (work.get(pool) ?? 0) + v);
  };
  const [onlyPool, ...otherPools] = Object.keys(config.pools);
  if (onlyPool !== undefined && otherPools.length === 0) {
    const total = totals.reduce((a, b) => a + b, 0);
    add(onlyPool, total);
    return work;
  }
  // The due delayed jobs are the lowest ranks of the delayed set (it is ordered by due time).
  const states = [
    { key: `${base}:wait`, list: true },
    { key: `${base}:prioritized`, list: false },
    { key: `${base}:active`, list: true },
    { key: `${base}:delayed`, list: false },
  ];
  const samples = await Promise.all(
    states.map((state, i) => sampleIds(redis, state.key, state.list, totals[i]!, window.sample)),
  );
  await Promise.all(
    samples.map(async (ids, i) => {
      const total = totals[i]!;
      if (total === 0) return;
      const data = ids.length ? await Promise.all(ids.map((id) => redis.hget(`${base}:${id}`, 'data'))) : [];
      const sampled = data.map((raw) => poolOf(config, raw));
      if (sampled.length === 0) return add('unknown', total);
      const share = new Map<string, number>();
      for (const p of sampled) share.set(p, (share.get(p) ?? 0) + 1);
      // Largest remainder: the pools' figures add up to the state's exact total.
      const parts = [...share].map(([pool, c]) => ({ pool, exact: (c / sampled.length) * total }));
      let left = total - parts.reduce((s, p) => s + Math.floor(p.exact), 0);
      parts.sort((a, b) => (b.exact % 1) - (a.exact % 1));
      for (const p of parts) {
        const extra = left > 0 ? 1 : 0;
        left -= extra;
        add(p.pool, Math.floor(p.exact) + extra);
      }
    }),
  );
  return work;
}

/**
 * Up to `n` job ids of a list or sorted set of `total` members, evenly spaced over its ranks (a
 * queue's newest jobs alone would give the split of the last few moments): all of them when
 * there are no more than `n`.
 */
async function sampleIds(redis: Redis, key: string, list: boolean, total: number, n: number): Promise<string[]> {
  if (total === 0) return [];
  const range = (from: number, to: number): Promise<string[]> =>
    list ? redis.lrange(key, from, to) : redis.zrange(key, String(from), String(to));
  if (total <= n) return range(0, total - 1);
  const ranks = Array.from({ length: n }, (_, i) => Math.floor(((i + 0.5) * total) / n));
  return (await Promise.all(ranks.map((rank) => range(rank, rank)))).flat();
}

/** The IP pool a dispatch job's provider sends from, or `unknown`. */
function poolOf(config: SluiceConfig, raw: string | null): string {
  if (raw === null) return 'unknown';
  try {
    const provider = (JSON.parse(raw) as { provider?: unknown }).provider;
    const entry = typeof provider === 'string' && Object.hasOwn(config.providers, provider) ? provider : undefined;
    return entry === undefined ? 'unknown' : config.providers[entry]!.pool;
  } catch {
    return 'unknown';
  }
}

/**
 * Admissible work over every dispatch queue (each class's partitions, at its horizon), by
 * pool: every configured pool listed, 0 when idle, so the series never vanishes.
 */
export async function admissibleByPool(
  deps: { redis: Redis; keys: Keys; config: SluiceConfig; queues: Pick<Queues, 'dispatchAll'> },
  now: number,
): Promise<{ pool: string; work: number }[]> {
  const { redis, keys, config, queues } = deps;
  const byPool = new Map<string, number>(Object.keys(config.pools).map((pool) => [pool, 0]));
  const each = PRIORITY_CLASSES.flatMap((p) => queues.dispatchAll(p).map((q) => ({ queue: q.name, p })));
  const sample = Math.max(4, Math.floor(ADMISSIBLE_SAMPLE / (4 * each.length)));
  const perQueue = await Promise.all(
    each.map(({ queue, p }) =>
      admissibleWork(redis, keys, config, queue, { horizonMs: config.horizonsMs[p], now, sample }),
    ),
  );
  for (const work of perQueue) for (const [pool, n] of work) byPool.set(pool, (byPool.get(pool) ?? 0) + n);
  return [...byPool].map(([pool, work]) => ({ pool, work }));
}
