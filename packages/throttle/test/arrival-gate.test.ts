import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { createLimiter, MAX_GATED, type ArriveRequest, type LayerLimit } from '@sluice/throttle';
import { maxInWindow } from '../../../test/support/fleet.js';
import { useRedisPrefix } from '../../../test/support/redis-prefix.js';

const r = useRedisPrefix();

/** Provider, receiver, pool: `receiver` limited as given, the others without a limit. */
function gated(
  receiver: Omit<LayerLimit, 'key'>,
  key = r.keys.bucket('receiver', randomUUID()),
): ArriveRequest['layers'] {
  return [{ key: r.keys.bucket('provider', randomUUID()) }, { key, ...receiver }, { key: r.keys.bucket('pool', 'p') }];
}

describe('the arrival gate', () => {
  it('keeps at most rate + burst sends in any second, 8 callers at once, each sending when told', async () => {
    const limiter = createLimiter({ redis: r.redis, jitterSlackMs: 50 });
    const layers = gated({ rate: 50, burst: 5 });
    const arrivals: number[] = [];
    const started = Date.now();
    const caller = async (): Promise<void> => {
      while (Date.now() - started < 2_500) {
        const room = await limiter.arrive({ layers, aheadMs: 100 });
        if (room.outcome === 'beyond') {
          await sleep(room.waitMs - 100);
          continue;
        }
        if (room.waitMs > 0) await sleep(room.waitMs);
        arrivals.push(Date.now());
      }
    };
    await Promise.all(Array.from({ length: 8 }, caller));
    // What a receiver counting these arrivals sees: never more than 55 in a second, and the
    // rate itself used (50/s for 2.5 s, with the first burst).
    expect(maxInWindow(arrivals)).toBeLessThanOrEqual(55);
    expect(arrivals.length).toBeGreaterThanOrEqual(0.9 * 50 * 2.5);
    expect(Number(await r.redis.hget(layers[1].key, 'wi'))).toBe(arrivals.length);
  });

  it('places a send ahead when its room is near, and counts nothing when it is further than asked', async () => {
    const limiter = createLimiter({ redis: r.redis, jitterSlackMs: 50 });
    const layers = gated({ rate: 10, burst: 2 });
    // Twelve at once: rate + burst. A stall's missed slots are room for late sends.
    for (let i = 0; i < 12; i++)
      expect(await limiter.arrive({ layers, aheadMs: 0 })).toEqual({ outcome: 'placed', waitMs: 0 });
    // The thirteenth is a window (1.05 s: a second and the jitter slack) after the first.
    const beyond = await limiter.arrive({ layers, aheadMs: 250 });
    expect(beyond).toMatchObject({ outcome: 'beyond', layer: 'receiver' });
    expect(beyond.waitMs).toBeGreaterThan(900);
    expect(beyond.waitMs).toBeLessThanOrEqual(1_050);
    expect(Number(await r.redis.hget(layers[1].key, 'wi'))).toBe(12);
    const asked = Date.now();
    const ahead = await limiter.arrive({ layers, aheadMs: 2_000 });
    expect(ahead.outcome).toBe('placed');
    expect(ahead.waitMs).toBeGreaterThan(900);
    // A send never goes before the one placed last: the next waits behind it (its wait is
    // shorter only by the time that passed between the two answers).
    const next = await limiter.arrive({ layers, aheadMs: 2_000 });
    expect(Date.now() + next.waitMs).toBeGreaterThanOrEqual(asked + ahead.waitMs - 1);
  });

  it('binds at once when the rate is lowered, and keeps its history when the rate is raised', async () => {
    const limiter = createLimiter({ redis: r.redis, jitterSlackMs: 0 });
    const key = r.keys.bucket('receiver', randomUUID());
    for (let i = 0; i < 12; i++) await limiter.arrive({ layers: gated({ rate: 10, burst: 2 }, key), aheadMs: 0 });
    // Lowered to 5/s + 1: the twelve sent already fill it.
    expect((await limiter.arrive({ layers: gated({ rate: 5, burst: 1 }, key), aheadMs: 0 })).outcome).toBe('beyond');
    // A second later, eight more: the ring (twelve places) has gone round once.
    await sleep(1_050);
    for (let i = 0; i < 8; i++) await limiter.arrive({ layers: gated({ rate: 10, burst: 2 }, key), aheadMs: 0 });
    // Raised to 40/s + 4 = 44: the ring grows and the eight of this second still count, so
    // 36 more fit now and no more.
    const raised = gated({ rate: 40, burst: 4 }, key);
    for (let i = 0; i < 36; i++) expect((await limiter.arrive({ layers: raised, aheadMs: 0 })).outcome).toBe('placed');
    expect(await limiter.arrive({ layers: raised, aheadMs: 0 })).toMatchObject({
      outcome: 'beyond',
      layer: 'receiver',
    });
  });

  it('leaves a layer without a limit, or above MAX_GATED a second, out', async () => {
    const limiter = createLimiter({ redis: r.redis });
    const layers: ArriveRequest['layers'] = [
      { key: r.keys.bucket('provider', randomUUID()), rate: MAX_GATED, burst: 1 },
      { key: r.keys.bucket('receiver', randomUUID()) },
      { key: r.keys.bucket('pool', randomUUID()), rate: 1, burst: 1 },
    ];
    expect(await limiter.arrive({ layers, aheadMs: 0 })).toEqual({ outcome: 'placed', waitMs: 0 });
    expect(await limiter.arrive({ layers, aheadMs: 0 })).toEqual({ outcome: 'placed', waitMs: 0 });
    expect(await limiter.arrive({ layers, aheadMs: 0 })).toMatchObject({ outcome: 'beyond', layer: 'pool' });
    expect(await r.redis.exists(layers[0].key, layers[1].key)).toBe(0);
  });
});

describe('the arrival gate for a batch', () => {
  /** Each recipient's three layers: one provider and pool, the receiver of `receivers[i]`. */
  function batchOf(provider: LayerLimit, receivers: LayerLimit[]): ArriveRequest['layers'][] {
    return receivers.map((receiver) => [provider, receiver, { key: r.keys.bucket('pool', 'p') }]);
  }

  it('holds the provider and every receiver to rate + burst in any second, batches of 20 from 4 callers', async () => {
    const limiter = createLimiter({ redis: r.redis, jitterSlackMs: 50 });
    const provider = { key: r.keys.bucket('provider', randomUUID()), rate: 100, burst: 10 };
    const receivers = Array.from({ length: 4 }, () => ({
      key: r.keys.bucket('receiver', randomUUID()),
      rate: 30,
      burst: 3,
    }));
    // Five recipients of each receiver in every batch.
    const batch = batchOf(
      provider,
      receivers.flatMap((receiver) => Array<LayerLimit>(5).fill(receiver)),
    );
    const arrivals: number[] = [];
    const started = Date.now();
    const caller = async (): Promise<void> => {
      while (Date.now() - started < 2_500) {
        const room = await limiter.arriveBatch({ arrivals: batch, aheadMs: 100 });
        if (room.outcome === 'too-many') throw new Error('a batch of 20 fits 110 and 33');
        if (room.outcome === 'beyond') {
          await sleep(Math.max(1, room.waitMs - 100));
          continue;
        }
        if (room.waitMs > 0) await sleep(room.waitMs);
        arrivals.push(Date.now());
      }
    };
    await Promise.all(Array.from({ length: 4 }, caller));
    // Each batch is 20 sends at one instant, 5 at each receiver: what the provider sees stays
    // within 110 a second, and each receiver within 33 (6 batches: 30 of its recipients).
    const sends = arrivals.flatMap((t) => Array<number>(20).fill(t));
    expect(maxInWindow(sends)).toBeLessThanOrEqual(110);
    expect(maxInWindow(arrivals) * 5).toBeLessThanOrEqual(33);
    // The provider binds (the four receivers would take 132 a second): its rate is used.
    expect(sends.length).toBeGreaterThanOrEqual(0.8 * 100 * 2.5);
    for (const receiver of receivers) expect(Number(await r.redis.hget(receiver.key, 'wi'))).toBe(arrivals.length * 5);
    expect(Number(await r.redis.hget(provider.key, 'wi'))).toBe(sends.length);
  });

  it('places all of a batch or none: a full receiver holds the whole batch, and the others count nothing', async () => {
    const limiter = createLimiter({ redis: r.redis, jitterSlackMs: 0 });
    const provider = { key: r.keys.bucket('provider', randomUUID()), rate: 100, burst: 10 };
    const free = { key: r.keys.bucket('receiver', randomUUID()), rate: 100, burst: 10 };
    const busy = { key: r.keys.bucket('receiver', randomUUID()), rate: 5, burst: 1 };
    expect(
      await limiter.arriveBatch({ arrivals: batchOf(provider, Array<LayerLimit>(6).fill(busy)), aheadMs: 0 }),
    ).toEqual({ outcome: 'placed', waitMs: 0 });
    const held = await limiter.arriveBatch({ arrivals: batchOf(provider, [free, free, busy]), aheadMs: 200 });
    expect(held).toMatchObject({ outcome: 'beyond', layer: 'receiver', key: busy.key });
    expect(Number(await r.redis.hget(provider.key, 'wi'))).toBe(6);
    expect(await r.redis.hget(free.key, 'wi')).toBeNull();
  });

  it('refuses a batch with more sends at one layer than its rate + burst, naming it, and counts nothing', async () => {
    const limiter = createLimiter({ redis: r.redis, jitterSlackMs: 0 });
    const provider = { key: r.keys.bucket('provider', randomUUID()), rate: 100, burst: 10 };
    const small = { key: r.keys.bucket('receiver', randomUUID()), rate: 10, burst: 1 };
    const refused = await limiter.arriveBatch({
      arrivals: batchOf(provider, Array<LayerLimit>(12).fill(small)),
      aheadMs: 5_000,
    });
    expect(refused).toEqual({ outcome: 'too-many', layer: 'receiver', key: small.key, fits: 11 });
    expect(await r.redis.hget(provider.key, 'wi')).toBeNull();
    // Split to what fits, it goes.
    const fits = await limiter.arriveBatch({
      arrivals: batchOf(provider, Array<LayerLimit>(11).fill(small)),
      aheadMs: 0,
    });
    expect(fits).toEqual({ outcome: 'placed', waitMs: 0 });
    expect(Number(await r.redis.hget(small.key, 'wi'))).toBe(11);
  });
});
