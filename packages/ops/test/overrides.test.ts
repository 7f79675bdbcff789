import type { Redis } from 'ioredis';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseConfig, SluiceError, type Keys } from '@sluice/core';
import { createOverrides, type Overrides, type SetOverrideInput } from '@sluice/ops';
import { createAdjustments, quotaLayers, type Adjustments } from '@sluice/throttle';
import { useRedisPrefix } from '../../../test/support/redis-prefix.js';

const r = useRedisPrefix();
let redis: Redis;
let keys: Keys;
let overrides: Overrides;
const open: Adjustments[] = [];
const config = parseConfig({
  providers: { ses: { kind: 'ses', sandbox: true, rate: 100, burst: 20 } },
  receivers: [{ name: 'gmail', domains: ['gmail.test'], rate: 40, burst: 8 }],
});
const backpressure = { factor: 0.5, minFactor: 0.1, cooldownMs: 200, holdMs: 1_000 };

beforeEach(() => {
  redis = r.redis;
  keys = r.keys;
  overrides = createOverrides({ config, redis, keys });
});
afterEach(() => {
  for (const a of open.splice(0)) a.close();
});

async function reader(): Promise<Adjustments> {
  const a = createAdjustments({ redis, keys, backpressure, refreshMs: 20 });
  open.push(a);
  await a.start();
  return a;
}

/** Everything of this test's prefix: names and contents. */
async function snapshot(): Promise<Record<string, unknown>> {
  const found = (await redis.keys(`*${keys.prefix}*`)).sort();
  const out: Record<string, unknown> = {};
  for (const k of found) out[k] = (await redis.type(k)) === 'hash' ? await redis.hgetall(k) : await redis.xlen(k);
  return out;
}

const good: SetOverrideInput = {
  scope: 'receiver',
  name: 'gmail',
  kind: 'pause',
  forMs: 60_000,
  actor: 'ana',
  reason: 'blocks from Gmail, OPS-12',
};

describe('overrides', () => {
  it('refuses an override without an expiry or with a bad field, naming the field, and writes nothing', async () => {
    const before = await snapshot();
    const now = Date.now();
    const { forMs: _f, ...noExpiry } = good;
    const cases: [Record<string, unknown>, string][] = [
      [noExpiry, 'untilMs'],
      [{ ...good, untilMs: now + 60_000 }, 'forMs'], // both
      [{ ...noExpiry, untilMs: now - 1 }, 'untilMs'],
      [{ ...good, forMs: 8 * 86_400_000 }, 'forMs'],
      [{ ...noExpiry, untilMs: now + 8 * 86_400_000 }, 'untilMs'],
      [{ ...good, forMs: -5 }, 'forMs'],
      [{ ...good, kind: 'rate' }, 'rate'],
      [{ ...good, kind: 'rate', rate: 0 }, 'rate'],
      [{ ...good, rate: 5 }, 'rate'],
      [{ ...good, kind: 'stop' }, 'kind'],
      [{ ...good, scope: 'domain' }, 'scope'],
      [{ ...good, scope: 'provider', name: 'nope' }, 'name'],
      [{ ...good, scope: 'pool', name: 'nope' }, 'name'],
      [{ ...good, name: '' }, 'name'],
      [{ ...good, actor: ' ' }, 'actor'],
      [{ ...good, reason: '' }, 'reason'],
    ];
    for (const [input, path] of cases) {
      const err = await overrides.set(input as unknown as SetOverrideInput).catch((e: unknown) => e);
      expect(err, JSON.stringify(input)).toBeInstanceOf(SluiceError);
      expect(err).toMatchObject({ code: 'invalid_argument', path });
      expect((err as Error).message).toContain(path);
    }
    expect(await snapshot()).toEqual(before);
    expect(await overrides.list()).toEqual([]);
    expect(await overrides.audit()).toEqual([]);
  });

  it('lists an override set, and the audit trail says who set and cleared it, why and when', async () => {
    const a = await reader();
    const before = Date.now();
    const set = await overrides.set({ ...good, scope: 'provider', name: 'ses', kind: 'rate', rate: 5 });
    expect(set).toMatchObject({ scope: 'provider', name: 'ses', kind: 'rate', rate: 5, actor: 'ana' });
    expect(set.untilMs).toBeGreaterThanOrEqual(before + 60_000);
    expect(await overrides.list()).toEqual([set]);
    await a.refresh();
    // The provider's rate is replaced (burst a tenth of it), and the factor still applies on top.
    const layers = quotaLayers(config, keys, { to: 'x@gmail.test', tenantId: 'default' }, a).layers;
    expect(layers[0]).toMatchObject({ rate: 5, burst: 1 });
    expect(layers[1]).toMatchObject({ rate: 40, burst: 8 });

    expect(await overrides.clear('provider', 'ses', 'bo', 'SES fixed')).toBe(true);
    expect(await overrides.clear('provider', 'ses', 'bo', 'again')).toBe(false); // nothing in force: nothing written
    expect(await overrides.list()).toEqual([]);
    const trail = await overrides.audit();
    expect(trail.map((e) => [e.action, e.scope, e.name, e.kind, e.rate, e.actor, e.reason])).toEqual([
      ['clear', 'provider', 'ses', 'rate', 5, 'bo', 'SES fixed'],
      ['set', 'provider', 'ses', 'rate', 5, 'ana', good.reason],
    ]);
    for (const e of trail) expect(e.at).toBeGreaterThanOrEqual(before);
    await a.refresh();
    expect(quotaLayers(config, keys, { to: 'x@gmail.test', tenantId: 'default' }, a).layers[0]).toMatchObject({
      rate: 100,
    });
  });

  it('expires on time by itself, and two sweeps write one expire entry', async () => {
    const a = await reader();
    const set = await overrides.set({ ...good, forMs: 300 });
    await a.refresh();
    expect(a.override(keys.bucket('receiver', 'gmail'))).toMatchObject({ kind: 'pause', actor: 'ana' });
    expect(await overrides.list()).toEqual([set]);

    await new Promise((r) => setTimeout(r, set.untilMs - Date.now() + 20));
    // No process ran: readers see it gone anyway.
    expect(await overrides.list()).toEqual([]);
    expect(a.override(keys.bucket('receiver', 'gmail'))).toBeUndefined();
    expect(a.overrides()).toEqual([]);

    const swept = await Promise.all([overrides.sweep(), overrides.sweep()]);
    expect(swept.flat()).toHaveLength(1);
    expect(await redis.hexists(keys.adjustments(), `ovr:${keys.bucket('receiver', 'gmail')}`)).toBe(0);
    const expired = (await overrides.audit()).filter((e) => e.action === 'expire');
    expect(expired).toEqual([
      expect.objectContaining({
        action: 'expire',
        scope: 'receiver',
        name: 'gmail',
        kind: 'pause',
        actor: 'sluice',
        untilMs: set.untilMs,
      }),
    ]);
    console.log(
      `overrides: gone for readers ${Date.now() - set.untilMs} ms after its end, no sweep needed; concurrent sweeps expired ${swept.map((s) => s.length).join('+')}`,
    );
  });

  it('never sweeps an override set again in its place', async () => {
    await overrides.set({ ...good, name: 'yahoo', forMs: 50 });
    await new Promise((r) => setTimeout(r, 80));
    const again = await overrides.set({ ...good, name: 'yahoo', forMs: 60_000 });
    expect(await overrides.sweep()).toEqual([]);
    expect(await overrides.list()).toEqual([again]);
    expect(await overrides.clear('receiver', 'yahoo', 'ana', 'done')).toBe(true);
  });
});
