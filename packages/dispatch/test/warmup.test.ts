import type { Redis } from 'ioredis';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseConfig, type Clock, type Keys } from '@sluice/core';
import { createWarmup, route, type Warmup } from '@sluice/dispatch';
import { createAdjustments, createSignals, type Adjustments, type Signals } from '@sluice/throttle';
import { useRedisPrefix } from '../../../test/support/redis-prefix.js';

const r = useRedisPrefix();
let redis: Redis;
let keys: Keys;
const open: { close(): unknown }[] = [];

/** The time the warm-up, its signals and the adjustments read: the test steps it. */
let now: number;
const clock: Clock = () => now;

beforeEach(() => {
  redis = r.redis;
  keys = r.keys;
  now = 1_800_000_000_000;
});
afterEach(async () => {
  for (const o of open.splice(0).reverse()) await o.close();
});

const DAY_MS = 300;
const config = parseConfig({
  providers: {
    main: { kind: 'ses', sandbox: true, rate: 100, pool: 'warm' },
    fresh: { kind: 'ses', rate: 100, pool: 'new' },
  },
  defaultProvider: 'main',
  pools: {
    warm: {},
    new: {
      state: 'warming',
      warmup: {
        dayMs: DAY_MS,
        schedule: [
          { google: 2, '*': 3 },
          { google: 5, '*': 6 },
        ],
        healthy: { minVolume: 10 },
      },
    },
  },
  routes: {
    bulk: [
      { provider: 'fresh', weight: 1 },
      { provider: 'main', weight: 0 },
    ],
  },
});

async function setup(): Promise<{ warmup: Warmup; adjustments: Adjustments; signals: Signals }> {
  const adjustments = createAdjustments({ redis, keys, backpressure: config.backpressure, clock });
  const signals = createSignals({ redis, keys, bucketMs: 100, flushMs: 60_000, clock });
  open.push(signals, { close: () => adjustments.close() });
  const warmup = createWarmup({ config, redis, keys, adjustments, signals, clock });
  await warmup.start();
  return { warmup, adjustments, signals };
}
async function takeAll(warmup: Warmup, receiver: string, n = 10): Promise<number> {
  let taken = 0;
  for (let i = 0; i < n; i++) if (await warmup.take('new', receiver)) taken++;
  return taken;
}
/**
 * Steps past the pool's day and the settling of its last signals (2 s), then lets the
 * governor's part judge it; a tick a millisecond earlier must leave the day alone.
 */
async function nextDay(warmup: Warmup) {
  now = warmup.dayEndsAt('new') + 2_000 - 1;
  expect(await warmup.tick(now)).toEqual([]);
  now += 1;
  return warmup.tick(now);
}

describe('warm-up', () => {
  it('caps a warming pool per receiver and day, and gives back what was not admitted', async () => {
    const { warmup } = await setup();
    expect(warmup.stateOf('new')).toBe('warming');
    expect(await takeAll(warmup, 'google')).toBe(2);
    expect(await takeAll(warmup, 'yahoo')).toBe(3); // "*": every receiver on its own
    expect(await takeAll(warmup, 'apple')).toBe(3);
    await warmup.giveBack('new', 'google');
    expect(await takeAll(warmup, 'google')).toBe(1);
    // Another pool is not capped.
    expect(await warmup.take('warm', 'google')).toBe(true);
  });

  it('advances a step after a healthy day, holds it after an unhealthy or a quiet one, and turns active after the last', async () => {
    const { warmup, signals } = await setup();
    const pool = { kind: 'pool', name: 'new' } as const;

    // Day 1: 20 attempts, all accepted: healthy.
    signals.record([pool], 'attempted', 20);
    signals.record([pool], 'accepted', 20);
    await signals.flush();
    expect(await nextDay(warmup)).toMatchObject([
      { pool: 'new', action: 'advance', from: 0, to: 1, day: { attempted: 20, accepted: 20 } },
    ]);
    expect(await takeAll(warmup, 'google')).toBe(5);

    // Day 2: receivers throttle a fifth of it: held at the same step.
    signals.record([pool], 'attempted', 20);
    signals.record([pool], 'accepted', 16);
    signals.record([pool], 'deferred:throttled', 4);
    await signals.flush();
    const [held] = await nextDay(warmup);
    expect(held).toMatchObject({ action: 'hold', from: 1, to: 1 });
    expect(held!.day.why).toMatch(/throttles and blocks 4\/20 over 0.05/);

    // Day 3: too quiet to tell: held.
    signals.record([pool], 'attempted', 3);
    signals.record([pool], 'accepted', 3);
    await signals.flush();
    expect(await nextDay(warmup)).toMatchObject([{ action: 'hold', day: { why: '3 attempts, fewer than 10' } }]);

    // Day 4: healthy, and the last step: the pool is warm, no caps any more.
    signals.record([pool], 'attempted', 30);
    signals.record([pool], 'accepted', 30);
    await signals.flush();
    expect(await nextDay(warmup)).toMatchObject([{ action: 'warm', from: 1, to: 2 }]);
    expect(warmup.stateOf('new')).toBe('active');
    expect(await takeAll(warmup, 'google', 20)).toBe(20);
  });
});

describe('routing by pool state', () => {
  const states = parseConfig({
    providers: {
      a: { kind: 'ses', sandbox: true, rate: 10, pool: 'pa' },
      b: { kind: 'ses', sandbox: true, rate: 10, pool: 'pb' },
      c: { kind: 'ses', sandbox: true, rate: 10, pool: 'pc' },
    },
    defaultProvider: 'a',
    pools: { pa: {}, pb: {}, pc: {} },
    routes: {
      s: [
        { provider: 'a', weight: 1 },
        { provider: 'b', weight: 1 },
        { provider: 'c', weight: 0 },
      ],
    },
  });

  it('sends nothing new to a draining or retired pool, and to a standby one only on failover', async () => {
    const { adjustments } = await setup();
    const bucket = (p: string) => keys.bucket('provider', p);
    const chosen = (
      state: Record<string, 'active' | 'draining' | 'retired' | 'standby'>,
      exclude?: (p: string) => boolean,
    ) => {
      const seen = new Set<string>();
      for (let i = 0; i < 200; i++) {
        const c = route(states, adjustments, bucket, 's', { poolState: (p) => state[p] ?? 'active', exclude });
        seen.add('provider' in c ? c.provider : 'wait');
      }
      return [...seen].sort();
    };
    expect(chosen({})).toEqual(['a', 'b']);
    expect(chosen({ pa: 'draining', pb: 'retired' })).toEqual(['c']);
    expect(chosen({ pa: 'standby' })).toEqual(['b']);
    expect(chosen({ pa: 'retired', pb: 'retired', pc: 'retired' })).toEqual(['wait']);
    expect(chosen({}, (p) => p === 'a')).toEqual(['b']);
  });

  it('refuses a warming pool without a schedule, and a route to one with no active pool beside it, naming the field', () => {
    expect(() => parseConfig({ pools: { default: {}, x: { state: 'warming' } } })).toThrow(
      /pools\.x\.warmup: a warming pool needs a warmup schedule/,
    );
    expect(() =>
      parseConfig({ pools: { default: {}, x: { state: 'warming', warmup: { schedule: [{ google: 10 }] } } } }),
    ).toThrow(/pools\.x\.warmup\.schedule\.0: needs a cap for "\*"/);
    expect(() =>
      parseConfig({
        providers: { main: { kind: 'ses', sandbox: true, rate: 10 }, fresh: { kind: 'ses', rate: 10, pool: 'x' } },
        defaultProvider: 'main',
        pools: { default: {}, x: { state: 'warming', warmup: { schedule: [{ '*': 10 }] } } },
        routes: { bulk: [{ provider: 'fresh' }] },
      }),
    ).toThrow(/routes\.bulk: routes to a warming pool, so needs a provider on an active pool/);
  });
});
