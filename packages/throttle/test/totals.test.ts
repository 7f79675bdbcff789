import { expect, it } from 'vitest';
import { createSignals, foldTotals } from '@sluice/throttle';
import { useRedisPrefix } from '../../../test/support/redis-prefix.js';

const r = useRedisPrefix();

it('adds each settled bucket to the totals once, however many fold at the same time', async () => {
  const { redis, keys } = r;
  const signals = createSignals({ redis, keys, flushMs: 60_000 });
  const now = Date.now();
  // Five settled seconds on two providers, as workers write them, and one not settled yet.
  for (let s = 3; s <= 7; s++) {
    const start = signals.bucketOf(now) - s * 1000;
    await redis.hset(keys.signals('provider', 'ses', start), { attempted: 10, accepted: 9, recipient_deferred: 1 });
    await redis.hset(keys.signals('provider', 'sg', start), { attempted: 2, accepted: 2 });
  }
  await redis.hset(keys.signals('provider', 'ses', signals.bucketOf(now)), { attempted: 100, accepted: 100 });

  // Eight folders at once (the governor's leader, status readers…): one adds, the rest find the mark moved.
  const connections = Array.from({ length: 8 }, () => redis.duplicate());
  const results = await Promise.all(
    connections.map((c) => foldTotals({ redis: c, keys, signals }, ['ses', 'sg'], now)),
  );
  for (const c of connections) await c.quit();
  for (const r of results) expect(r.counts).toEqual({ attempted: 60, accepted: 55, recipient_deferred: 5 });
  const deps = { redis, keys, signals };
  // Folding again adds nothing; the bucket not settled then is added once it has.
  expect((await foldTotals(deps, ['ses', 'sg'], now)).counts.attempted).toBe(60);
  expect((await foldTotals(deps, ['ses', 'sg'], now + 3_000)).counts).toMatchObject({ attempted: 160, accepted: 155 });
  await signals.close();
});
