import { afterEach, expect, it } from 'vitest';
import { parseConfig, type SluiceConfig } from '@sluice/core';
import { createQueues, type Queues } from '@sluice/store';
import { useRedisPrefix } from '../../../test/support/redis-prefix.js';
import { ADMISSIBLE_SAMPLE, admissibleByPool } from '../src/admissible.js';

// Admissible work on real BullMQ queues: which jobs count (waiting, and delayed until a moment
// within the horizon, not after), and how they split over IP pools by their provider.
const r = useRedisPrefix();
let queues: Queues | undefined;
afterEach(async () => {
  await queues?.close();
  queues = undefined;
});

function configWith(pools: string[]): SluiceConfig {
  return parseConfig({
    redis: { url: r.url, prefix: r.prefix },
    pools: Object.fromEntries(pools.map((p) => [p, { state: 'active' }])),
    providers: {
      ses: { kind: 'ses', sandbox: true, rate: 100, pool: pools[0] },
      relay: { kind: 'smtp', sandbox: true, rate: 100, pool: pools.at(-1) },
    },
    defaultProvider: 'ses',
  });
}

/** Dispatch jobs as admission writes them: `n` for `provider`, each `delay` ms ahead. */
async function dispatched(q: Queues, provider: string, n: number, delay = 0, priority = 'normal' as const) {
  const queue = q.dispatchAll(priority)[0]!;
  await queue.addBulk(
    Array.from({ length: n }, (_, i) => ({
      name: 'send',
      data: { id: `${provider}-${delay}-${i}`, provider, priority },
      opts: { jobId: `${provider}-${delay}-${i}`, delay },
    })),
  );
}

it('counts jobs waiting and due within the horizon, each under its provider’s pool, every pool listed', async () => {
  const config = configWith(['warm', 'cold']);
  queues = createQueues({ redis: r.redis, keys: r.keys, partitions: 1 });
  const now = Date.now();
  const read = async () =>
    Object.fromEntries(
      (await admissibleByPool({ redis: r.redis, keys: r.keys, config, queues: queues! }, now)).map((a) => [
        a.pool,
        a.work,
      ]),
    );
  expect(await read()).toEqual({ warm: 0, cold: 0 });

  await dispatched(queues, 'ses', 7);
  await dispatched(queues, 'relay', 3, 400); // a booked slot within the 1 s horizon
  await dispatched(queues, 'relay', 5, 60_000); // a retry a minute away: not yet
  await dispatched(queues, 'gone', 2); // a provider no longer configured
  expect(await read()).toEqual({ warm: 7, cold: 3, unknown: 2 });
});

it('splits in proportion past its sample and keeps the exact total; with one pool reads no job', async () => {
  const config = configWith(['warm', 'cold']);
  queues = createQueues({ redis: r.redis, keys: r.keys, partitions: 1 });
  const many = ADMISSIBLE_SAMPLE; // more than one queue's sample of one state
  await dispatched(queues, 'ses', many * 3);
  await dispatched(queues, 'relay', many);
  const split = await admissibleByPool({ redis: r.redis, keys: r.keys, config, queues }, Date.now());
  const total = split.reduce((n, a) => n + a.work, 0);
  expect(total).toBe(many * 4);
  // Sampled evenly over the queue (not its newest jobs, all relay's): three quarters ses's.
  expect(split).toEqual([
    { pool: 'warm', work: many * 3 },
    { pool: 'cold', work: many },
  ]);

  const one = configWith(['default']);
  // What it asks Redis, seen by MONITOR: counts only, no job read.
  const calls: string[][] = [];
  const monitor = await r.redis.monitor();
  monitor.on('monitor', (_time: string, args: string[]) => calls.push(args));
  const onePool = await admissibleByPool({ redis: r.redis, keys: r.keys, config: one, queues }, Date.now());
  await new Promise((res) => setTimeout(res, 100));
  monitor.disconnect();
  expect(onePool).toEqual([{ pool: 'default', work: many * 4 }]);
  const ours = calls.filter((args) => args[1]?.startsWith(`${r.prefix}:`)).map((args) => args[0]!.toLowerCase());
  expect(new Set(ours)).toEqual(new Set(['llen', 'zcard', 'zcount']));
});
