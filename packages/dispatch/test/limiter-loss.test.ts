import type { Redis } from 'ioredis';
import { pino } from 'pino';
import { afterEach, expect, it } from 'vitest';
import { parseConfig, type Clock } from '@sluice/core';
import { createGovernor } from '@sluice/dispatch';
import { createAdjustments, createSignals } from '@sluice/throttle';
import { createLimiterLossChore } from '../src/control/limiter-loss.js';
import { useRedisPrefix } from '../../../test/support/redis-prefix.js';

// The limiter's Redis losing its data (its buckets full again) is met by rates that start
// again at a fraction and climb back, not by a full bucket at once (issue 31, item 3). One
// Redis plays both roles here; the loss is its limiter keys deleted, as a failover to a
// replica that had not caught up leaves them.

const r = useRedisPrefix();
const open: { close(): unknown }[] = [];
afterEach(async () => {
  for (const o of open.splice(0).reverse()) await o.close();
});

const config = parseConfig({
  providers: { ses: { kind: 'ses', rate: 100, burst: 10, sandbox: true } },
  receivers: [{ name: 'gmail', domains: ['gmail.com'], rate: 50 }],
  governor: { recovery: { step: 0.5, everyMs: 100 }, cooldownMs: 0 },
});

function setup(redis: Redis) {
  let now = 1_800_000_000_000;
  const clock: Clock = () => now;
  const adjustments = createAdjustments({ redis, keys: r.keys, backpressure: config.backpressure, clock });
  const signals = createSignals({ redis, keys: r.keys, clock });
  const warnings: string[] = [];
  const logger = { warn: (_: object, msg: string) => void warnings.push(msg) } as never;
  const chore = createLimiterLossChore({ config, redis, control: redis, keys: r.keys, adjustments, logger });
  const governor = createGovernor({
    config,
    redis,
    keys: r.keys,
    adjustments,
    signals,
    logger: pino({ level: 'silent' }),
    holder: 'test',
    pauseCampaign: async () => undefined,
    resumeCampaign: async () => undefined,
    campaignClass: async () => undefined,
    clock,
  });
  open.push(governor, signals, { close: () => adjustments.close() });
  return { adjustments, chore, governor, warnings, step: (ms: number) => void (now += ms), now: () => now };
}

it('lowers nothing at a first start, and every provider and receiver to the share once the limiter lost its data', async () => {
  const { adjustments, chore, warnings, now } = setup(r.redis);
  const provider = r.keys.bucket('provider', 'ses');
  const receiver = r.keys.bucket('receiver', 'gmail');
  // A first start: no epoch anywhere. Then the same epoch: nothing to do.
  expect(await chore.run(now())).toBe(0);
  expect(await chore.run(now())).toBe(0);
  await adjustments.refresh();
  expect(adjustments.factor(provider)).toBe(1);

  // The limiter's keys are gone (its epoch and the adjustments hash with it).
  await r.redis.del(r.keys.limiterEpoch(), r.keys.adjustments());
  expect(await chore.run(now())).toBe(2);
  await adjustments.refresh();
  expect(adjustments.factor(provider)).toBe(0.25);
  expect(adjustments.factor(receiver)).toBe(0.25);
  expect(adjustments.governed(provider)?.rule).toBe('limiter-loss');
  expect(warnings).toEqual([expect.stringMatching(/lost its data: 2 provider and receiver rates start again at 0.25/)]);
  // Seen once: the next run leaves them to the governor.
  expect(await chore.run(now())).toBe(0);
});

it('lets the governor’s recovery take the rates back up step by step, not at once', async () => {
  const { adjustments, chore, governor, step, now } = setup(r.redis);
  const provider = r.keys.bucket('provider', 'ses');
  await chore.run(now());
  await r.redis.del(r.keys.limiterEpoch(), r.keys.adjustments());
  await chore.run(now());
  const factors: number[] = [];
  for (let i = 0; i < 12 && adjustments.factor(provider) < 1; i++) {
    step(150);
    await governor.tick();
    await adjustments.refresh();
    factors.push(adjustments.factor(provider));
  }
  // Up by a share of the cut rate a step, never back to the whole rate in one.
  expect(factors[0]).toBeGreaterThan(0.25);
  expect(factors[0]).toBeLessThan(1);
  expect(factors.at(-1)).toBe(1);
  for (let i = 1; i < factors.length; i++) expect(factors[i]).toBeGreaterThanOrEqual(factors[i - 1]!);
});
