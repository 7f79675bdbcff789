import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { beforeEach, describe, expect, it } from 'vitest';
import type { Keys } from '@sluice/core';
import { createLimiter, type AdmitResult, type Layers, type LayerLimit, type Limiter } from '@sluice/throttle';
import { useRedisPrefix } from '../../../test/support/redis-prefix.js';

const r = useRedisPrefix();
let redis: Redis;
let keys: Keys;

beforeEach(() => {
  redis = r.redis;
  keys = r.keys;
});

function layers(overrides: Partial<Record<0 | 1 | 2 | 3 | 4, LayerLimit>>, tag = randomUUID().slice(0, 6)): Layers {
  const base = (i: 0 | 1 | 2 | 3 | 4, kind: 'provider' | 'receiver' | 'pool' | 'campaign' | 'tenant'): LayerLimit =>
    overrides[i] ?? { key: keys.bucket(kind, `${tag}-${i}`) };
  return [base(0, 'provider'), base(1, 'receiver'), base(2, 'pool'), base(3, 'campaign'), base(4, 'tenant')];
}

describe('limiter', () => {
  it('never grants more than burst + rate × time, with 8 concurrent callers', async () => {
    const limiter = createLimiter({ redis, reserves: { critical: 0, high: 0 }, jitterSlackMs: 0 });
    const l = layers({ 0: { key: keys.bucket('provider', randomUUID()), rate: 200, burst: 10 } });
    const started = Date.now();
    let granted = 0;
    const caller = async (): Promise<void> => {
      while (Date.now() - started < 1500) {
        const r = await limiter.admit({ layers: l, priority: 'normal', horizonMs: 0 });
        if (r.outcome === 'granted') granted++;
      }
    };
    await Promise.all(Array.from({ length: 8 }, caller));
    const elapsed = (Date.now() - started) / 1000;
    expect(granted).toBeLessThanOrEqual(10 + 200 * elapsed + 1);
    expect(granted).toBeGreaterThanOrEqual(200 * 1.5 * 0.9);
  });

  it('decides concurrent requests in one batch, each as if alone: a failing one fails alone, a bad one is refused by name', async () => {
    const limiter = createLimiter({ redis, reserves: { critical: 0, high: 0 }, jitterSlackMs: 0 });
    const provider = { key: keys.bucket('provider', randomUUID()), rate: 1, burst: 3 };
    const broken = keys.bucket('receiver', randomUUID());
    await redis.set(broken, 'not a bucket');
    const calls = await redis.info('commandstats');
    const asked = [
      limiter.admit({ layers: layers({ 0: provider }), priority: 'normal', horizonMs: 0 }),
      limiter.admit({ layers: layers({ 0: provider, 1: { key: broken, rate: 5 } }), priority: 'normal', horizonMs: 0 }),
      ...Array.from({ length: 4 }, () =>
        limiter.admit({ layers: layers({ 0: provider }), priority: 'normal', horizonMs: 0 }),
      ),
    ];
    const results = await Promise.allSettled(asked);
    // One script call for the six (the first goes alone only if nothing else was asked with it).
    const evals = (info: string): number => Number(/cmdstat_evalsha:calls=(\d+)/.exec(info)?.[1] ?? 0);
    expect(evals(await redis.info('commandstats')) - evals(calls)).toBeLessThanOrEqual(2);
    expect(results[1]).toMatchObject({ status: 'rejected', reason: { message: expect.stringMatching(/WRONGTYPE/) } });
    // The provider's three were spent by the first three that went, in order; the rest denied.
    const outcomes = results.map((r) => (r.status === 'fulfilled' ? r.value.outcome : 'error'));
    expect(outcomes).toEqual(['granted', 'error', 'granted', 'granted', 'denied', 'denied']);
    await expect(
      limiter.admit({ layers: layers({ 1: { key: broken, rate: Number.NaN } }), priority: 'normal', horizonMs: 0 }),
    ).rejects.toMatchObject({ code: 'invalid_argument', path: 'layers.1' });
  });

  it('is all or nothing: a denial by one layer charges no other', async () => {
    const limiter = createLimiter({ redis, reserves: { critical: 0, high: 0 }, jitterSlackMs: 0 });
    const provider = { key: keys.bucket('provider', randomUUID()), rate: 1, burst: 3 };
    const busy = { key: keys.bucket('receiver', randomUUID()), rate: 1, burst: 1 };
    const free = { key: keys.bucket('receiver', randomUUID()) };
    expect(
      (await limiter.admit({ layers: layers({ 0: provider, 1: busy }), priority: 'normal', horizonMs: 0 })).outcome,
    ).toBe('granted');
    for (let i = 0; i < 5; i++) {
      const r = await limiter.admit({ layers: layers({ 0: provider, 1: busy }), priority: 'normal', horizonMs: 0 });
      expect(r).toMatchObject({ outcome: 'denied', layer: 'receiver' });
    }
    // The provider spent one of its three: two are left for another receiver.
    const other = layers({ 0: provider, 1: free });
    expect((await limiter.admit({ layers: other, priority: 'normal', horizonMs: 0 })).outcome).toBe('granted');
    expect((await limiter.admit({ layers: other, priority: 'normal', horizonMs: 0 })).outcome).toBe('granted');
    expect(await limiter.admit({ layers: other, priority: 'normal', horizonMs: 0 })).toMatchObject({
      outcome: 'denied',
      layer: 'provider',
    });
  });

  it('books slots one interval apart instead of asking callers to poll', async () => {
    const limiter = createLimiter({ redis, reserves: { critical: 0, high: 0 }, jitterSlackMs: 0 });
    const l = layers({ 1: { key: keys.bucket('receiver', randomUUID()), rate: 50, burst: 1 } });
    // Each slot lies between (before + wait) and (after + wait) of its call, wherever the
    // call's Redis time fell: bounds that hold however slowly a loaded machine runs the loop.
    const slots: { earliest: number; latest: number }[] = [];
    for (let i = 0; i < 20; i++) {
      const before = Date.now();
      const r = await limiter.admit({ layers: l, priority: 'low', horizonMs: 10_000 });
      const after = Date.now();
      const wait = r.outcome === 'granted' ? 0 : r.waitMs;
      slots.push({ earliest: before + wait - 1, latest: after + wait });
      if (i > 0) expect(r).toMatchObject({ outcome: 'booked', layer: 'receiver' });
    }
    expect(limiter.calls).toBe(20);
    // Slots are 20 ms apart: the 20th is 380 ms after the first (waits are rounded up to the ms).
    expect(slots[19]!.latest - slots[0]!.earliest).toBeGreaterThanOrEqual(19 * 20 - 1);
    expect(slots[19]!.earliest - slots[0]!.latest).toBeLessThanOrEqual(19 * 20 + 1);
    // Beyond the horizon nothing is booked, and the answer says when to ask again.
    const far = await limiter.admit({ layers: l, priority: 'low', horizonMs: 100 });
    expect(far.outcome).toBe('denied');
    if (far.outcome === 'denied') expect(far.waitMs).toBeGreaterThan(200);
  });

  it('with lending off, keeps the critical reserve from lower classes, and lets critical borrow down', async () => {
    const limiter = createLimiter({ redis, reserves: { critical: 0.2, high: 0 }, lendAheadMs: null, jitterSlackMs: 0 });
    const l = layers({ 0: { key: keys.bucket('provider', randomUUID()), rate: 10, burst: 10 } });
    // Low takes the shared 80%: 8 at once, then nothing more.
    let low = 0;
    for (let i = 0; i < 12; i++) {
      if ((await limiter.admit({ layers: l, priority: 'low', horizonMs: 0 })).outcome === 'granted') low++;
    }
    expect(low).toBe(8);
    // Critical still gets its 20%: 2 at once.
    let critical = 0;
    for (let i = 0; i < 4; i++) {
      if ((await limiter.admit({ layers: l, priority: 'critical', horizonMs: 0 })).outcome === 'granted') critical++;
    }
    expect(critical).toBe(2);

    // On an idle bucket critical borrows the shared slice first, keeping its reserve.
    const idle = layers({ 0: { key: keys.bucket('provider', randomUUID()), rate: 10, burst: 10 } });
    let c = 0;
    for (let i = 0; i < 12; i++) {
      if ((await limiter.admit({ layers: idle, priority: 'critical', horizonMs: 0 })).outcome === 'granted') c++;
    }
    expect(c).toBe(10);
  });

  it('lends an idle reserve one slot at a time, keeping room for critical within lendAheadMs', async () => {
    const limiter = createLimiter({ redis, reserves: { critical: 0.2, high: 0 }, lendAheadMs: 250, jitterSlackMs: 0 });
    const l = layers({ 0: { key: keys.bucket('provider', randomUUID()), rate: 10, burst: 10 } });
    // Low takes the shared 8 and one of the reserve's 2: after it, critical can still go now.
    let low = 0;
    for (let i = 0; i < 12; i++) {
      if ((await limiter.admit({ layers: l, priority: 'low', horizonMs: 0 })).outcome === 'granted') low++;
    }
    expect(low).toBe(9);
    expect((await limiter.admit({ layers: l, priority: 'critical', horizonMs: 0 })).outcome).toBe('granted');
  });

  /** Low asks without pause for `ms` (booking up to 1 s ahead); the slots it got by then, and critical's waits. */
  async function saturate(limiter: Limiter, l: Layers, ms: number, criticalEveryMs = 0, lowLendMs?: number) {
    const start = Date.now();
    const lowSlots: number[] = [];
    const criticalWaits: number[] = [];
    let nextCritical = start + 1500;
    while (Date.now() < start + ms) {
      if (criticalEveryMs > 0 && Date.now() >= nextCritical) {
        nextCritical += criticalEveryMs;
        const c = await limiter.admit({ layers: l, priority: 'critical', horizonMs: 1000 });
        criticalWaits.push(c.outcome === 'granted' ? 0 : c.waitMs);
        continue;
      }
      const asked = Date.now();
      const got = await limiter.admit({ layers: l, priority: 'low', horizonMs: 1000, lendAheadMs: lowLendMs });
      if (got.outcome === 'denied') await new Promise((resolve) => setTimeout(resolve, 5));
      else lowSlots.push(asked + (got.outcome === 'booked' ? got.waitMs : 0));
    }
    return { lowSlots: lowSlots.filter((at) => at <= start + ms).length, criticalWaits };
  }

  it('lets a lower class use all of a layer no critical mail uses, and never more', async () => {
    const limiter = createLimiter({ redis, reserves: { critical: 0.2, high: 0 }, lendAheadMs: 250, jitterSlackMs: 0 });
    const l = layers({ 1: { key: keys.bucket('receiver', randomUUID()), rate: 20, burst: 2 } });
    const { lowSlots } = await saturate(limiter, l, 3000);
    // 3 s of 20/s and the burst: 62. Without lending low would get 80% of it (~50).
    expect(lowSlots).toBeGreaterThanOrEqual(0.95 * 60);
    expect(lowSlots).toBeLessThanOrEqual(62);
  });

  it('a critical message finds its slot within lendAheadMs of a lower class using its reserve', async () => {
    const limiter = createLimiter({ redis, reserves: { critical: 0.2, high: 0 }, lendAheadMs: 250, jitterSlackMs: 0 });
    const l = layers({ 1: { key: keys.bucket('receiver', randomUUID()), rate: 20, burst: 2 } });
    const { criticalWaits } = await saturate(limiter, l, 4000, 300);
    expect(criticalWaits.length).toBeGreaterThanOrEqual(7);
    // Rounded up to the ms, and the call's own time.
    expect(Math.max(...criticalWaits)).toBeLessThanOrEqual(260);
  });

  it("lends to a request only within its own shorter reach: critical then waits at most that (batched mail's)", async () => {
    const limiter = createLimiter({ redis, reserves: { critical: 0.2, high: 0 }, lendAheadMs: 250, jitterSlackMs: 0 });
    // 100/s, burst 10: the reserve's slice is 20/s with a burst of 2, lendable one slot at a time.
    const l = layers({ 0: { key: keys.bucket('provider', randomUUID()), rate: 100, burst: 10 } });
    const { lowSlots, criticalWaits } = await saturate(limiter, l, 4000, 300, 60);
    expect(criticalWaits.length).toBeGreaterThanOrEqual(7);
    expect(Math.max(...criticalWaits)).toBeLessThanOrEqual(70);
    // Still lent: low gets more than the shared 80% (4 s of 100/s and the burst: 410).
    expect(lowSlots).toBeGreaterThan(0.85 * 400);
    // A longer reach than the limiter's is the limiter's.
    const wide = layers({ 0: { key: keys.bucket('provider', randomUUID()), rate: 100, burst: 10 } });
    const { criticalWaits: waits } = await saturate(limiter, wide, 3000, 300, 5_000);
    expect(Math.max(...waits)).toBeLessThanOrEqual(260);
  });

  it("answers a group's later requests in one call as its first denial, without deciding them", async () => {
    const limiter = createLimiter({ redis, reserves: { critical: 0, high: 0 }, jitterSlackMs: 0 });
    const campaign = { key: keys.bucket('campaign', randomUUID()), rate: 1, burst: 1 };
    const receiver = (n: number) => ({ key: keys.bucket('receiver', `${randomUUID()}-${n}`), rate: 1, burst: 1 });
    const ask = (group: string, n: number, c = campaign) =>
      limiter.admit({ layers: layers({ 1: receiver(n), 3: c }), priority: 'low', horizonMs: 0, group });
    // One call: the campaign takes one; the second is denied at it, the rest of the group
    // with it; another group's request is decided on its own bucket.
    const other = { key: keys.bucket('campaign', randomUUID()), rate: 1, burst: 1 };
    const replies = await Promise.all([ask('g', 1), ask('g', 2), ask('g', 3), ask('g', 4), ask('h', 5, other)]);
    expect(replies.map((x) => `${x.outcome}${x.outcome === 'denied' ? ` ${x.layer}` : ''}`)).toEqual([
      'granted',
      'denied campaign',
      'denied campaign',
      'denied campaign',
      'granted',
    ]);
    expect(limiter.calls).toBe(3);
    // A denial at the receiver holds no group: the next request of the group is decided.
    const busy = receiver(9);
    const fresh = { key: keys.bucket('campaign', randomUUID()), rate: 100, burst: 100 };
    const at = (r: ReturnType<typeof receiver>) =>
      limiter.admit({ layers: layers({ 1: r, 3: fresh }), priority: 'low', horizonMs: 0, group: 'k' });
    const more = await Promise.all([at(busy), at(busy), at(receiver(10))]);
    expect(more.map((x) => x.outcome)).toEqual(['granted', 'denied', 'granted']);
  });

  it('tells a caller denied beyond the horizon when the reserve will be lent to it, long before its own wait', async () => {
    const limiter = createLimiter({ redis, reserves: { critical: 0.2, high: 0 }, lendAheadMs: 250, jitterSlackMs: 0 });
    // 40/s: the shared slice takes a slot every 31.25 ms, the reserve (8/s) one every 125 ms.
    const l = layers({ 0: { key: keys.bucket('provider', randomUUID()), rate: 40, burst: 4 } });
    // A caller booking 2 s ahead takes the shared slice that far, and the reserve as far as
    // it is lent: until its next slot is over 125 ms away (critical could not go within 250 ms).
    for (let i = 0; i < 200; i++) {
      if ((await limiter.admit({ layers: l, priority: 'low', horizonMs: 2000 })).outcome === 'denied') break;
    }
    // One that takes only a slot free now: its own slice is ~2 s away, the reserve's next
    // slot 125–250 ms. It is told both.
    const denied = await limiter.admit({ layers: l, priority: 'low', horizonMs: 0 });
    const answered = Date.now();
    expect(denied).toMatchObject({ outcome: 'denied', layer: 'provider' });
    if (denied.outcome !== 'denied') return;
    expect(denied.waitMs).toBeGreaterThan(1000);
    expect(denied.lendWaitMs).toBeGreaterThan(100);
    expect(denied.lendWaitMs).toBeLessThanOrEqual(251);
    // Not lent before then; lent when it says (a timer may fire a millisecond early, and the
    // wait is rounded to the millisecond: 10 ms of slack, far below the reserve's 125 ms).
    expect((await limiter.admit({ layers: l, priority: 'low', horizonMs: 0 })).outcome).toBe('denied');
    await new Promise((resolve) => setTimeout(resolve, answered + denied.lendWaitMs! + 10 - Date.now()));
    expect((await limiter.admit({ layers: l, priority: 'low', horizonMs: 0 })).outcome).toBe('granted');
  });

  it('charges every layer for a booked slot, so a booked message needs no second call', async () => {
    const limiter = createLimiter({ redis, reserves: { critical: 0, high: 0 }, jitterSlackMs: 0 });
    const provider = { key: keys.bucket('provider', randomUUID()), rate: 1000, burst: 1 };
    const slow = { key: keys.bucket('receiver', randomUUID()), rate: 10, burst: 1 };
    expect(
      (await limiter.admit({ layers: layers({ 0: provider, 1: slow }), priority: 'low', horizonMs: 5000 })).outcome,
    ).toBe('granted');
    const beforeBooked = Date.now();
    const booked = await limiter.admit({ layers: layers({ 0: provider, 1: slow }), priority: 'low', horizonMs: 5000 });
    expect(booked).toMatchObject({ outcome: 'booked', layer: 'receiver' });
    // The provider is charged at the booked slot (~100 ms out): its next slot comes after it.
    // (Waits are from each call's own now: compare the slots, allowing for the time between.)
    const other = await limiter.admit({ layers: layers({ 0: provider }), priority: 'low', horizonMs: 5000 });
    const afterOther = Date.now();
    expect(other.outcome).toBe('booked');
    if (other.outcome === 'booked' && booked.outcome === 'booked')
      expect(afterOther + other.waitMs).toBeGreaterThanOrEqual(beforeBooked + booked.waitMs);
  });

  it('holds part of the burst back as slack for jitter', async () => {
    const limiter = createLimiter({ redis, reserves: { critical: 0, high: 0 }, jitterSlackMs: 100 });
    const l = layers({ 0: { key: keys.bucket('provider', randomUUID()), rate: 20, burst: 5 } });
    let now = 0;
    for (let i = 0; i < 5; i++)
      if ((await limiter.admit({ layers: l, priority: 'low', horizonMs: 0 })).outcome === 'granted') now++;
    expect(now).toBe(3); // 5 minus 100 ms at 20/s
  });

  it('expires idle buckets (a gone bucket is a full one)', async () => {
    const limiter = createLimiter({ redis, reserves: { critical: 0, high: 0 }, jitterSlackMs: 0 });
    const key = keys.bucket('campaign', randomUUID());
    await limiter.admit({ layers: layers({ 3: { key, rate: 100, burst: 5 } }), priority: 'low', horizonMs: 0 });
    const ttl = await redis.pttl(key);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(11_000);
  });
});

describe('lines (waitlist)', () => {
  type Denied = Extract<AdmitResult, { outcome: 'denied' }>;
  const lined = { priority: 'low', horizonMs: 500, waitlist: ['receiver'] } as const;
  /** A receiver at `rate`/s with `queued` callers turned away and holding places. */
  async function queue(
    limiter: Limiter,
    key: string,
    rate: number,
    queued: number,
  ): Promise<(Denied & { at: number; earliest: number })[]> {
    const l = layers({ 1: { key, rate, burst: 1 } });
    const out: (Denied & { at: number; earliest: number })[] = [];
    // Granted and booked up to the horizon first, then places in the line.
    for (let i = 0; out.length < queued; i++) {
      const before = Date.now();
      const r = await limiter.admit({ ...lined, layers: l });
      // When it is told to come back, on this clock: the wait was measured somewhere in the
      // call, so between `earliest` (from its start) and `at` (from its end).
      if (r.outcome === 'denied') out.push({ ...r, at: Date.now() + r.waitMs, earliest: before + r.waitMs });
      expect(i).toBeLessThan(queued + rate);
    }
    return out;
  }

  it('spreads callers denied beyond the horizon at the layer’s rate, each with its own numbered place', async () => {
    const limiter = createLimiter({ redis, reserves: { critical: 0, high: 0 }, jitterSlackMs: 0 });
    const denied = await queue(limiter, keys.bucket('receiver', randomUUID()), 10, 5);
    expect(denied.map((d) => d.ticket?.number)).toEqual([1, 2, 3, 4, 5]);
    // 100 ms apart (within 5 ms), whatever the calls themselves took.
    for (let i = 1; i < denied.length; i++) {
      expect(denied[i]!.at - denied[i - 1]!.earliest).toBeGreaterThanOrEqual(95);
      expect(denied[i]!.earliest - denied[i - 1]!.at).toBeLessThanOrEqual(105);
    }
  });

  it('keeps a holder’s place: asking again early neither loses it nor takes a new one', async () => {
    const limiter = createLimiter({ redis, reserves: { critical: 0, high: 0 }, jitterSlackMs: 0 });
    const key = keys.bucket('receiver', randomUUID());
    const denied = await queue(limiter, key, 10, 5);
    const before = Date.now();
    const again = await limiter.admit({
      ...lined,
      layers: layers({ 1: { key, rate: 10, burst: 1 } }),
      ticket: denied[2]!.ticket,
    });
    const after = Date.now();
    expect(again.outcome).toBe('denied');
    expect((again as Denied).ticket).toEqual(denied[2]!.ticket);
    // The same time to come back (within 5 ms), on this clock, whatever the calls took.
    expect(after + (again as Denied).waitMs).toBeGreaterThanOrEqual(denied[2]!.earliest - 5);
    expect(before + (again as Denied).waitMs).toBeLessThanOrEqual(denied[2]!.at + 5);
    // A newcomer goes after the fifth, not before: the line holds even where the bucket
    // itself would take it sooner.
    const newcomer = await limiter.admit({ ...lined, layers: layers({ 1: { key, rate: 10, burst: 1 } }) });
    expect((newcomer as Denied).ticket?.number).toBe(6);
  });

  it('moves every place when the rate changes: sooner after a rise, later after a cut', async () => {
    const limiter = createLimiter({ redis, reserves: { critical: 0, high: 0 }, jitterSlackMs: 0 });
    const key = keys.bucket('receiver', randomUUID());
    const denied = await queue(limiter, key, 10, 12);
    const last = denied[11]!;
    expect(last.waitMs).toBeGreaterThan(1_000);
    const at = async (rate: number): Promise<Denied> =>
      (await limiter.admit({
        ...lined,
        layers: layers({ 1: { key, rate, burst: 1 } }),
        ticket: last.ticket,
      })) as Denied;
    const faster = await at(40);
    expect(faster.ticket).toEqual(last.ticket);
    expect(faster.waitMs).toBeLessThan(last.waitMs / 2);
    const slower = await at(5);
    expect(slower.waitMs).toBeGreaterThan(last.waitMs * 1.5);
  });

  it('tells a place far off to come back at half its wait (a rise shows within half of it)', async () => {
    const limiter = createLimiter({ redis, reserves: { critical: 0, high: 0 }, jitterSlackMs: 0 });
    const denied = await queue(limiter, keys.bucket('receiver', randomUUID()), 10, 60);
    // Place 60 at 10/s is about 6 s off: told 3 s.
    expect(denied[59]!.waitMs).toBeGreaterThan(2_500);
    expect(denied[59]!.waitMs).toBeLessThan(3_500);
    expect(denied[15]!.waitMs).toBeLessThanOrEqual(2_000);
  });

  it('books a holder’s slot once its turn comes', async () => {
    const limiter = createLimiter({ redis, reserves: { critical: 0, high: 0 }, jitterSlackMs: 0 });
    const key = keys.bucket('receiver', randomUUID());
    const l = layers({ 1: { key, rate: 20, burst: 1 } });
    const [first, second] = await queue(limiter, key, 20, 3);
    await new Promise((r) => setTimeout(r, first!.waitMs));
    expect((await limiter.admit({ ...lined, layers: l, ticket: first!.ticket })).outcome).toBe('booked');
    // The next one is a slot later, and still waits for it.
    const next = await limiter.admit({ ...lined, layers: l, ticket: second!.ticket });
    expect(next).toMatchObject({ outcome: 'denied', ticket: second!.ticket });
  });

  it('leaves callers that ask for no line alone: the answer is the plain wait', async () => {
    const limiter = createLimiter({ redis, reserves: { critical: 0, high: 0 }, jitterSlackMs: 0 });
    const key = keys.bucket('receiver', randomUUID());
    const denied = await queue(limiter, key, 10, 5);
    const plain = await limiter.admit({
      layers: layers({ 1: { key, rate: 10, burst: 1 } }),
      priority: 'low',
      horizonMs: 500,
    });
    expect(plain.outcome).toBe('denied');
    expect((plain as Denied).ticket).toBeUndefined();
    expect((plain as Denied).waitMs).toBeLessThan(denied[4]!.waitMs);
  });
});
