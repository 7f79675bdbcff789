import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { type Clock, type Keys } from '@sluice/core';
import { createSignals, type Signals } from '@sluice/throttle';
import { useRedisPrefix } from '../../../test/support/redis-prefix.js';

const r = useRedisPrefix();
let redis: Redis;
let keys: Keys;
const open: Signals[] = [];

/** The time the signals read: the test steps it, from a bucket boundary. */
let now: number;
const clock: Clock = () => now;

beforeEach(() => {
  redis = r.redis;
  keys = r.keys;
  now = 1_800_000_000_000;
});
afterEach(async () => {
  for (const s of open.splice(0)) await s.close();
});

function signals(bucketMs = 200): Signals {
  const s = createSignals({ redis, keys, bucketMs, retainMs: 5_000, flushMs: 60_000, clock });
  open.push(s);
  return s;
}
const google = { kind: 'receiver', name: 'google' } as const;
const ses = { kind: 'provider', name: 'ses' } as const;

describe('signals', () => {
  it('count per key across processes, and a window sums its buckets', async () => {
    const a = signals();
    const b = signals();
    for (let i = 0; i < 30; i++) a.record([google, ses], 'attempted');
    a.record([google], 'deferred:throttled', 4);
    now += 500; // two buckets later
    b.record([google, ses], 'attempted', 10);
    b.record([google], 'deferred:reputation_deferral');
    await Promise.all([a.flush(), b.flush()]);
    const w = await a.read(google, 1_000);
    expect(w.count('attempted')).toBe(40);
    expect(w.deferred()).toBe(5);
    expect(w.ratio(w.deferred(), w.count('attempted'), 20)).toBeCloseTo(0.125);
    expect(w).toMatchObject({ windowMs: 1_000, activeMs: 400 }); // 5 buckets, 2 with signals
    expect((await b.read(ses, 1_000)).count('attempted')).toBe(40);
    expect((await b.read(ses, 200)).count('attempted')).toBe(10); // only the newest bucket
  });

  it('countOnce writes at once and once per marker, whichever process asks', async () => {
    const a = signals();
    const b = signals();
    const marker = `${keys.feedbackSignal('ses', 'e-1')}`;
    const on = [ses, google, { kind: 'tenant', name: 'acme' }] as const;
    expect(await a.countOnce(marker, 60, on, 'complained')).toBe(true);
    // Unflushed: it is already in Redis for every reader.
    expect((await b.read(ses, 1_000)).count('complained')).toBe(1);
    expect(await b.countOnce(marker, 60, on, 'complained')).toBe(false);
    now += 400;
    expect(await a.countOnce(marker, 60, on, 'complained')).toBe(false);
    for (const key of on) expect((await a.read(key, 1_000)).count('complained')).toBe(1);
    expect(await a.active('tenant')).toEqual(['acme']);
    expect(await redis.ttl(marker)).toBeGreaterThan(50);
  });

  it('give no ratio below the minimum sample', async () => {
    const s = signals();
    const key = { kind: 'campaign', name: `c-${randomUUID()}` } as const;
    s.record([key], 'attempted', 9);
    s.record([key], 'complained', 3);
    await s.flush();
    const w = await s.read(key, 1_000);
    expect(w.ratio(w.count('complained'), w.count('attempted'), 10)).toBeUndefined();
    expect(w.ratio(w.count('complained'), w.count('attempted'), 9)).toBeCloseTo(1 / 3);
  });

  it('forget what is older than the window', async () => {
    const s = signals(100);
    const key = { kind: 'pool', name: `p-${randomUUID()}` } as const;
    s.record([key], 'bounced_hard', 5);
    await s.flush();
    now += 350;
    s.record([key], 'bounced_hard', 1);
    await s.flush();
    expect((await s.read(key, 200)).count('bounced_hard')).toBe(1);
    expect((await s.read(key, 1_000)).count('bounced_hard')).toBe(6);
    // A reader that worked its window out earlier passes its own now.
    expect((await s.read(key, 100, now - 350)).count('bounced_hard')).toBe(5);
  });

  it('add up the finished buckets between two times, each once', async () => {
    const s = signals(100);
    const key = { kind: 'pool', name: `p-${randomUUID()}` } as const;
    const start = now;
    for (const n of [1, 2, 4]) {
      s.record([key], 'attempted', n);
      now += 100;
    }
    await s.flush();
    expect((await s.sum(key, start, start + 200)).attempted).toBe(3);
    expect((await s.sum(key, start + 200, start + 300)).attempted).toBe(4);
    // None that began more than the retention (5 s) ago.
    now = start + 200 + 4_950;
    expect((await s.sum(key, start, now)).attempted).toBe(4);
  });

  it('flush by themselves every flushMs, and on close', async () => {
    // Only the flush timer is faked: stepping it runs the flush Redis then answers.
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    try {
      const s = createSignals({ redis, keys, bucketMs: 1_000, flushMs: 20, clock });
      const key = { kind: 'tenant', name: `t-${randomUUID()}` } as const;
      s.record([key], 'accepted', 2);
      await vi.advanceTimersByTimeAsync(19);
      expect((await s.read(key, 1_000)).count('accepted')).toBe(0);
      await vi.advanceTimersByTimeAsync(1);
      expect((await s.read(key, 1_000)).count('accepted')).toBe(2);
      s.record([key], 'accepted');
      await s.close();
      expect((await s.read(key, 1_000)).count('accepted')).toBe(3);
    } finally {
      vi.useRealTimers();
    }
  });
});

it('index the keys that had signals lately, per kind', async () => {
  const s = createSignals({ redis, keys, bucketMs: 1_000, retainMs: 60_000, flushMs: 60_000, clock });
  open.push(s);
  const name = `r-${randomUUID()}`;
  s.record(
    [
      { kind: 'receiver', name },
      { kind: 'provider', name: 'ses' },
    ],
    'attempted',
  );
  await s.flush();
  expect(await s.active('receiver')).toContain(name);
  expect(await s.active('campaign')).not.toContain(name);
  now += 60_000;
  expect(await s.active('receiver')).toContain(name);
  now += 1;
  expect(await s.active('receiver')).not.toContain(name); // quiet for longer than the retention
});

describe('settled buckets', () => {
  const hgetalls = async (): Promise<number> =>
    Number(/cmdstat_hgetall:calls=(\d+)/.exec(await redis.info('commandstats'))?.[1] ?? 0);

  it('are fetched once: a window read again fetches only its buckets not yet settled', async () => {
    const s = createSignals({ redis, keys, bucketMs: 1_000, retainMs: 120_000, flushMs: 60_000, clock });
    open.push(s);
    for (let i = 0; i < 60; i++) {
      s.record([google], 'attempted', 2);
      if (i % 3 === 0) s.record([google], 'deferred:throttled');
      await s.flush();
      now += 1_000;
    }
    // Buckets 1…59 of the writes, and the current (empty) one.
    const first = await s.read(google, 60_000);
    expect(first.count('attempted')).toBe(118);
    expect(first.deferred()).toBe(19);
    const before = await hgetalls();
    const again = await s.read(google, 60_000);
    // The newest six buckets (the current one and five within settleMs of their end) only.
    expect((await hgetalls()) - before).toBe(6);
    expect(again.counts).toEqual(first.counts);
    // A second later the window moved on by one bucket (1 out, 60 in): what a reader without
    // copies reads too.
    s.record([google], 'attempted', 5);
    await s.flush();
    now += 1_000;
    const moved = await s.read(google, 60_000);
    expect(moved.count('attempted')).toBe(118 - 2 + 5);
    const fresh = createSignals({ redis, keys, bucketMs: 1_000, retainMs: 120_000, flushMs: 60_000, clock });
    open.push(fresh);
    expect((await fresh.read(google, 60_000)).counts).toEqual(moved.counts);
  });

  it('counts flushed too late for their bucket land in the current one: none lost, none twice', async () => {
    const writer = createSignals({ redis, keys, bucketMs: 1_000, retainMs: 120_000, flushMs: 60_000, clock });
    const reader = createSignals({ redis, keys, bucketMs: 1_000, retainMs: 120_000, flushMs: 60_000, clock });
    open.push(writer, reader);
    const start = now;
    writer.record([google], 'attempted', 7);
    // The writer stalls for 10 s; meanwhile the reader has read (and kept) the settled buckets.
    now += 10_000;
    expect((await reader.read(google, 30_000)).count('attempted')).toBe(0);
    await writer.flush();
    expect(await redis.exists(keys.signals('receiver', 'google', start))).toBe(0);
    expect(await redis.hget(keys.signals('receiver', 'google', writer.bucketOf(now)), 'attempted')).toBe('7');
    expect((await reader.read(google, 30_000)).count('attempted')).toBe(7);
    expect((await reader.sum(google, start, now + 1_000)).attempted).toBe(7);
  });
});
