import { expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { createKeys, parseConfig, type PriorityClass } from '@sluice/core';
import { createAdjustments } from '@sluice/throttle';
import { startRedisServer, type RedisServer } from './support/redis-server.js';
import { waitFor } from './support/fleet.js';
import { useFleet } from './support/use-fleet.js';

// The limiter on a Redis of its own (`redis.limiter`), the queues and records on the run's:
// what each Redis holds, and what the fleet does while the limiter's is away (fail closed).

// Started before the fleet (the module's top-level await runs before useFleet's beforeAll).
const limiter: RedisServer = await startRedisServer();
const fleet = useFleet({
  schedulers: 1,
  workers: 1,
  config: () => ({ redis: { limiter: limiterUrl() } }),
});

const limiterUrl = (): string => limiter.url;

const send = (i: number, priority: PriorityClass = 'normal') =>
  fleet().client.send({
    from: 'Acme <news@acme.test>',
    to: `user${i}@example.test`,
    subject: `m${i}`,
    text: 'hi',
    priority,
  });

it('keeps the limiter on its own Redis, sends nothing while it is away, and everything once back', async () => {
  const keys = createKeys(fleet().prefix);
  const first = await Promise.all(Array.from({ length: 10 }, (_, i) => send(i)));
  await waitFor(() => fleet().sandbox.accepted().length >= 10, 20_000, '10 accepted');

  // The limiter's keys are on its Redis, the records on the queues' Redis, and not the other way.
  const own = new Redis(limiterUrl());
  try {
    expect(await own.exists(keys.bucket('provider', 'ses'))).toBe(1);
    expect(await fleet().redis.exists(keys.bucket('provider', 'ses'))).toBe(0);
    expect(await fleet().redis.exists(keys.message(first[0]!.id))).toBe(1);
    expect(await own.exists(keys.message(first[0]!.id))).toBe(0);
  } finally {
    own.disconnect();
  }

  // The limiter's Redis stops answering (frozen: connections stay open, commands hang).
  await limiter.kill('SIGSTOP');
  // Critical mail too: without `reserves.localShare` (the default) it waits like the rest.
  const during = await Promise.all(Array.from({ length: 20 }, (_, i) => send(100 + i, i % 4 ? 'normal' : 'critical')));
  await new Promise((r) => setTimeout(r, 5_000));
  expect(fleet().sandbox.accepted().length, 'nothing is sent without the limiter, not even critical mail').toBe(10);

  await limiter.kill('SIGCONT');
  await waitFor(() => fleet().sandbox.accepted().length >= 30, 30_000, 'the 20 sent once the limiter is back');
  await new Promise((r) => setTimeout(r, 1_000));
  const arrived = fleet()
    .sandbox.accepted()
    .map((a) => a.sluiceId);
  expect(arrived.length, 'each once').toBe(30);
  expect(new Set(arrived)).toEqual(new Set([...first, ...during].map((m) => m.id)));
  for (const m of during) {
    const r = await waitFor(
      async () => ((await fleet().client.messages.status(m.id))?.state === 'sent' ? true : null),
      10_000,
      `${m.id} sent`,
    );
    expect(r).toBe(true);
  }
}, 120_000);

it('starts again from a fraction of every rate when the limiter Redis comes back without its data', async () => {
  const keys = createKeys(fleet().prefix);
  const before = fleet().sandbox.accepted().length;
  // Killed and started again empty (it keeps no data): its buckets, adjustments and epoch are gone.
  await limiter.kill('SIGKILL');
  await limiter.restart();
  const own = new Redis(limiterUrl());
  const adjustments = createAdjustments({ redis: own, keys, backpressure: parseConfig({}).backpressure });
  try {
    const provider = keys.bucket('provider', 'ses');
    const lowered = await waitFor(
      async () => {
        await adjustments.refresh();
        return adjustments.governed(provider);
      },
      10_000,
      'the provider lowered after the loss',
    );
    expect(lowered).toMatchObject({ rule: 'limiter-loss', factor: 0.25 });
    const more = await Promise.all(Array.from({ length: 10 }, (_, i) => send(200 + i)));
    await waitFor(() => fleet().sandbox.accepted().length >= before + 10, 30_000, 'the 10 sent after the loss');
    const arrived = new Set(
      fleet()
        .sandbox.accepted()
        .map((a) => a.sluiceId),
    );
    for (const m of more) expect(arrived.has(m.id)).toBe(true);
  } finally {
    adjustments.close();
    own.disconnect();
  }
}, 60_000);

it('stops its Redis', async () => {
  await limiter.stop();
});
