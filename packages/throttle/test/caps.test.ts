import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import type { CapLimits } from '@sluice/core';
import { createLimiter, type AdmitRequest, type AdmitResult, type Layers, type Limiter } from '@sluice/throttle';
import { useRedisPrefix } from '../../../test/support/redis-prefix.js';

// Plan caps in the limiter's admission, on real Redis: counted atomically with the layers.
const r = useRedisPrefix();

function layersOf(tenant: string, tenantRate?: number): Layers {
  const tag = randomUUID().slice(0, 6);
  return [
    { key: r.keys.bucket('provider', tag) },
    { key: r.keys.bucket('receiver', tag) },
    { key: r.keys.bucket('pool', tag) },
    { key: r.keys.bucket('campaign', '-') },
    { key: r.keys.bucket('tenant', tenant), ...(tenantRate ? { rate: tenantRate, burst: 1_000 } : {}) },
  ];
}

const request = (tenant: string, caps: CapLimits, key?: { id: string; caps: CapLimits }): AdmitRequest => ({
  layers: layersOf(tenant),
  priority: 'normal',
  horizonMs: 1_000,
  caps: {
    tenant: { key: r.keys.capCount('tenant', tenant), limits: caps },
    ...(key ? { key: { key: r.keys.capCount('key', key.id), limits: key.caps } } : {}),
  },
});

/** Redis's clock, ms: the windows are its. */
async function redisNow(): Promise<number> {
  const [s, us] = await r.redis.time();
  return Number(s) * 1000 + Math.floor(Number(us) / 1000);
}

/** `senders` limiters, each on its own connection, asking `each` times at once. */
async function flood(senders: number, each: number, ask: (l: Limiter, i: number) => Promise<AdmitResult>) {
  const conns = Array.from({ length: senders }, () => new Redis(r.url));
  try {
    const limiters = conns.map((redis) => createLimiter({ redis, reserves: { critical: 0, high: 0 } }));
    const results = await Promise.all(
      limiters.map((l) => Promise.all(Array.from({ length: each }, (_, i) => ask(l, i)))),
    );
    return results.flat();
  } finally {
    conns.forEach((c) => c.disconnect());
  }
}
/** A fourth key's request, of a key with a cap of 100 an hour, its tenant's cap 20. */
const l4 = (tenant: string) => (l: Limiter) =>
  l.admit(request(tenant, { hour: 20 }, { id: `k4-${tenant}`, caps: { hour: 100 } }));
const admitted = (results: AdmitResult[]) => results.filter((x) => x.outcome !== 'denied').length;

describe('plan caps in admission', () => {
  it('admits exactly the cap under 8 concurrent senders, and denies the rest until the window ends', async () => {
    const tenant = `t-${randomUUID().slice(0, 6)}`;
    const before = await redisNow();
    const results = await flood(8, 25, (l) => l.admit(request(tenant, { minute: 30, hour: 45 })));
    const after = await redisNow();
    const minuteOf = (ms: number) => Math.floor(ms / 60_000);
    // One minute window (a run across a minute's end has two, and the hour's cap binds).
    expect(admitted(results)).toBe(minuteOf(before) === minuteOf(after) ? 30 : 45);
    const denied = results.find((x) => x.outcome === 'denied');
    expect(denied).toMatchObject({ outcome: 'denied', layer: 'tenant', cap: { of: 'tenant', window: 'minute' } });
    const minuteEnd = (minuteOf(after) + 1) * 60_000;
    expect(Math.abs(before + denied!.waitMs - minuteEnd)).toBeLessThan(1_500);
  });

  it("counts each key against its own caps and all of them against the tenant's", async () => {
    const tenant = `t-${randomUUID().slice(0, 6)}`;
    const keys = ['k1', 'k2', 'k3'].map((k) => `${k}-${randomUUID().slice(0, 6)}`);
    // Three keys of 5 an hour each, the tenant 20: each key stops at its own 5.
    const results = await flood(8, 12, (l, i) =>
      l.admit(request(tenant, { hour: 20 }, { id: keys[i % 3]!, caps: { hour: 5 } })),
    );
    const perKey = keys.map((_, k) => results.filter((x, j) => (j % 12) % 3 === k && x.outcome !== 'denied').length);
    expect(perKey).toEqual([5, 5, 5]);
    expect(
      results.filter((x) => x.outcome === 'denied').every((x) => x.outcome === 'denied' && x.cap?.of === 'key'),
    ).toBe(true);
    // A fourth key of 100: the tenant's 20 stops it after 5 more.
    const more = await flood(8, 4, l4(tenant));
    expect(admitted(more)).toBe(5);
    expect(more.find((x) => x.outcome === 'denied')).toMatchObject({ cap: { of: 'tenant', window: 'hour' } });
  });

  it('charges nothing when a cap denies: the layers are as they were', async () => {
    const tenant = `t-${randomUUID().slice(0, 6)}`;
    const limiter = createLimiter({ redis: r.redis, reserves: { critical: 0, high: 0 } });
    const layers = layersOf(tenant, 10);
    const ask = () =>
      limiter.admit({
        layers,
        priority: 'normal',
        horizonMs: 0,
        caps: { tenant: { key: r.keys.capCount('tenant', tenant), limits: { day: 2 } } },
      });
    expect((await ask()).outcome).toBe('granted');
    expect((await ask()).outcome).toBe('granted');
    const bucket = await r.redis.hgetall(layers[4].key);
    const capped = await ask();
    expect(capped).toMatchObject({ outcome: 'denied', cap: { of: 'tenant', window: 'day' } });
    expect(await r.redis.hgetall(layers[4].key)).toEqual(bucket);
    // A message with no caps of its own still goes: the counters are the tenant's plan's.
    expect((await limiter.admit({ layers, priority: 'normal', horizonMs: 0 })).outcome).toBe('granted');
  });

  it('ends a month cap at the first of the next month, UTC, and keeps its counter until a day past it', async () => {
    const tenant = `t-${randomUUID().slice(0, 6)}`;
    const limiter = createLimiter({ redis: r.redis, reserves: { critical: 0, high: 0 } });
    const ask = () => limiter.admit(request(tenant, { month: 1 }));
    expect((await ask()).outcome).not.toBe('denied');
    const now = await redisNow();
    const denied = await ask();
    const d = new Date(now);
    const nextMonth = Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
    expect(denied.outcome === 'denied' && Math.abs(now + denied.waitMs - nextMonth)).toBeLessThan(1_500);
    const expiresAt = await r.redis.pexpiretime(r.keys.capCount('tenant', tenant));
    expect(expiresAt).toBe(nextMonth + 86_400_000);
  });
});
