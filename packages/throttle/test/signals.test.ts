import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createKeys, type Keys } from '@sluice/core';
import { createSignals, type Signals } from '@sluice/throttle';

let redis: Redis;
let keys: Keys;
const open: Signals[] = [];

beforeAll(() => {
  redis = new Redis(inject('redisUrl'));
  keys = createKeys(`t-${randomUUID().slice(0, 8)}`);
});
afterAll(async () => {
  for (const s of open) await s.close();
  const found = await redis.keys(`${keys.prefix}:sig*`);
  if (found.length) await redis.del(...found);
  await redis.quit();
});

function signals(bucketMs = 200): Signals {
  const s = createSignals({ redis, keys, bucketMs, retainMs: 5_000, flushMs: 50 });
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
    b.record([google, ses], 'attempted', 10);
    b.record([google], 'deferred:reputation_deferral');
    await Promise.all([a.flush(), b.flush()]);
    const w = await a.read(google, 1_000);
    expect(w.count('attempted')).toBe(40);
    expect(w.deferred()).toBe(5);
    expect(w.ratio(w.deferred(), w.count('attempted'), 20)).toBeCloseTo(0.125);
    expect((await b.read(ses, 1_000)).count('attempted')).toBe(40);
  });

  it('give no ratio below the minimum sample', async () => {
    const s = signals();
    const key = { kind: 'campaign', name: `c-${randomUUID()}` } as const;
    s.record([key], 'attempted', 9);
    s.record([key], 'complained', 3);
    await s.flush();
    const w = await s.read(key, 1_000);
    expect(w.ratio(w.count('complained'), w.count('attempted'), 10)).toBeUndefined();
  });

  it('forget what is older than the window', async () => {
    const s = signals(100);
    const key = { kind: 'pool', name: `p-${randomUUID()}` } as const;
    s.record([key], 'bounced_hard', 5);
    await s.flush();
    await new Promise((r) => setTimeout(r, 350));
    s.record([key], 'bounced_hard', 1);
    await s.flush();
    expect((await s.read(key, 200)).count('bounced_hard')).toBe(1);
    expect((await s.read(key, 1_000)).count('bounced_hard')).toBe(6);
  });

  it('flush by themselves, and on close', async () => {
    const s = createSignals({ redis, keys, bucketMs: 1_000, flushMs: 20 });
    const key = { kind: 'tenant', name: `t-${randomUUID()}` } as const;
    s.record([key], 'accepted', 2);
    await new Promise((r) => setTimeout(r, 80));
    // Two buckets: a bucket boundary may pass between the record and the read.
    expect((await s.read(key, 2_000)).count('accepted')).toBe(2);
    s.record([key], 'accepted');
    await s.close();
    expect((await s.read(key, 2_000)).count('accepted')).toBe(3);
  });
});

it('index the keys that had signals lately, per kind', async () => {
  const s = createSignals({ redis, keys, bucketMs: 1_000, retainMs: 60_000, flushMs: 1_000 });
  open.push(s);
  const name = `r-${randomUUID()}`;
  s.record([{ kind: 'receiver', name }, { kind: 'provider', name: 'ses' }], 'attempted');
  await s.flush();
  expect(await s.active('receiver')).toContain(name);
  expect(await s.active('campaign')).not.toContain(name);
});
