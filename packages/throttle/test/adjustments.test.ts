import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseConfig, type Clock, type Keys } from '@sluice/core';
import {
  adjustmentField,
  createAdjustments,
  decodeAdjustment,
  MAX_RECIPIENT_HOLDS,
  encodeAdjustment,
  quotaLayers,
  slowFactor,
  sweepOverrides,
  type Adjustments,
  type OverrideState,
} from '@sluice/throttle';
import { useRedisPrefix } from '../../../test/support/redis-prefix.js';

const r = useRedisPrefix();
let redis: Redis;
let keys: Keys;
const open: Adjustments[] = [];

beforeEach(() => {
  redis = r.redis;
  keys = r.keys;
});
afterEach(() => {
  for (const a of open.splice(0)) a.close();
});

const backpressure = { factor: 0.5, minFactor: 0.1, cooldownMs: 60_000, holdMs: 1_000 };

/** A clock the test steps; it starts at the wall clock's now (Redis time, which `slowDown` stamps with, is close). */
function steppedClock(): { clock: Clock; step(ms: number): void; set(ms: number): void } {
  let now = Date.now();
  return {
    clock: () => now,
    step: (ms) => void (now += ms),
    set: (ms) => void (now = ms),
  };
}

function adjustments(clock?: Clock): Adjustments {
  const a = createAdjustments({ redis, keys, backpressure, refreshMs: 20, ...(clock ? { clock } : {}) });
  open.push(a);
  return a;
}

const hget = async (field: string): Promise<string | null> => redis.hget(keys.adjustments(), field);

/**
 * As if the cooldown had passed since the key's last cut: `slowDown` stamps cuts with Redis
 * time, which a test cannot step, so the stored cut is moved back by the cooldown instead.
 */
async function afterCooldown(layerKey: string): Promise<void> {
  const field = adjustmentField('slow', layerKey);
  const slow = decodeAdjustment('slow', (await hget(field))!)!;
  const earlier = { ...slow, lastCut: slow.lastCut - backpressure.cooldownMs };
  await redis.hset(keys.adjustments(), field, encodeAdjustment('slow', earlier));
}

describe('backpressure', () => {
  it('halves a throttled key once per cooldown, never below the floor, and every process sees it', async () => {
    const writer = adjustments();
    const reader = adjustments();
    await reader.start();
    const key = keys.bucket('receiver', `r-${randomUUID()}`);
    expect(reader.factor(key)).toBe(1);
    // The refusals of one burst arrive together: one cut.
    const burst = await Promise.all([writer.slowDown(key), writer.slowDown(key), writer.slowDown(key)]);
    expect(burst.filter((r) => r.cut)).toHaveLength(1);
    expect(burst.map((r) => r.factor)).toEqual([0.5, 0.5, 0.5]);
    // Within the cooldown a throttle only extends the hold.
    const again = await writer.slowDown(key);
    expect(again).toMatchObject({ cut: false, factor: 0.5 });
    expect(again.untilMs).toBeGreaterThanOrEqual(Math.max(...burst.map((r) => r.untilMs)));
    await reader.refresh();
    expect(reader.factor(key)).toBe(0.5);
    const factors: number[] = [];
    for (let i = 0; i < 5; i++) {
      await afterCooldown(key);
      const r = await writer.slowDown(key);
      expect(r.cut).toBe(true);
      factors.push(r.factor);
    }
    expect(factors).toEqual([0.25, 0.125, 0.1, 0.1, 0.1]);
    await reader.refresh();
    expect(reader.factor(key)).toBe(0.1);
  });

  it('holds the lowered rate, then doubles it every hold period back to full', async () => {
    const slow = { factor: 0.125, untilMs: 10_000 };
    expect(slowFactor(slow, 9_000, 1_000)).toBe(0.125);
    expect(slowFactor(slow, 10_500, 1_000)).toBe(0.25);
    expect(slowFactor(slow, 11_500, 1_000)).toBe(0.5);
    expect(slowFactor(slow, 13_000, 1_000)).toBe(1);
    // As a reader on its own clock sees a key cut three times.
    const t = steppedClock();
    const a = adjustments(t.clock);
    const key = keys.bucket('receiver', `r-${randomUUID()}`);
    await a.slowDown(key);
    await afterCooldown(key);
    await a.slowDown(key);
    await afterCooldown(key);
    const { factor, untilMs } = await a.slowDown(key);
    expect(factor).toBe(0.125);
    const reader = adjustments(t.clock);
    await reader.refresh();
    const seen = (at: number): number => {
      t.set(at);
      return reader.factor(key);
    };
    expect([seen(untilMs), seen(untilMs + 1), seen(untilMs + 1_000), seen(untilMs + 2_000)]).toEqual([
      0.125, 0.25, 0.5, 1,
    ]);
    expect(reader.loweredAt(key)).toBe(decodeAdjustment('slow', (await hget(adjustmentField('slow', key)))!)!.lastCut);
    expect(reader.loweredAt(keys.bucket('receiver', 'never-throttled'))).toBeUndefined();
  });

  it('lowers the layers a message is admitted through, and caps the provider at its account limit', async () => {
    const a = adjustments();
    const config = parseConfig({
      providers: { ses: { kind: 'ses', sandbox: true, rate: 100, burst: 20 } },
      receivers: [{ name: 'gmail', domains: ['gmail.test'], rate: 40, burst: 8 }],
    });
    const subject = { to: 'x@gmail.test', tenantId: 'default' };
    const before = quotaLayers(config, keys, subject, a).layers;
    expect([before[0].rate, before[1].rate]).toEqual([100, 40]);
    await a.slowDown(keys.bucket('receiver', 'gmail'));
    await a.setCap('ses', 14);
    const after = quotaLayers(config, keys, subject, a).layers;
    expect(after[0]).toMatchObject({ rate: 14, burst: 14 });
    expect(after[1]).toMatchObject({ rate: 20, burst: 4 });
    // A receiver with no rate of its own is lowered from the provider's.
    const other = { to: 'x@elsewhere.test', tenantId: 'default' };
    await a.slowDown(keys.bucket('receiver', 'elsewhere.test'));
    expect(quotaLayers(config, keys, other, a).layers[1]).toMatchObject({ rate: 7 });
    await a.setCap('ses', undefined);
    expect(a.cap('ses')).toBeUndefined();
  });

  it('tells routing which providers are down or paused, until when', async () => {
    const t = steppedClock();
    const start = t.clock();
    const a = adjustments(t.clock);
    await a.markDown('sg', 60_000, '5 failures in a row');
    await a.pause('ses', start + 30_000, 'daily quota');
    const reader = adjustments(t.clock);
    await reader.refresh();
    expect(reader.standing('sg')).toEqual({ state: 'down', untilMs: start + 60_000, reason: '5 failures in a row' });
    expect(reader.standing('ses')).toEqual({ state: 'paused', untilMs: start + 30_000, reason: 'daily quota' });
    expect(reader.standing('mg')).toEqual({ state: 'ok' });
    // Both end by themselves, on time.
    t.step(30_000);
    expect(reader.standing('ses')).toEqual({ state: 'ok' });
    expect(reader.standing('sg')).toMatchObject({ state: 'down' });
    t.step(30_000);
    expect(reader.standing('sg')).toEqual({ state: 'ok' });
    await a.pause('ses', t.clock() + 60_000, 'daily quota');
    await a.pause('ses', undefined);
    await reader.refresh();
    expect(reader.standing('ses')).toEqual({ state: 'ok' });
    expect(await hget(adjustmentField('pause', 'ses'))).toBeNull();
  });
});

describe('the governor', () => {
  it('owns a key it set: a cut, recovery steps that keep the cut, and lifting it', async () => {
    const t = steppedClock();
    const a = adjustments(t.clock);
    const key = keys.bucket('receiver', `r-${randomUUID()}`);
    await a.slowDown(key);
    expect(a.factor(key)).toBe(0.5);
    const cutAt = t.clock();
    await a.setGoverned(key, 0.4, 'blocks', 0.8);
    expect(a.factor(key)).toBe(0.4);
    expect(a.loweredAt(key)).toBe(cutAt); // 0.4 is a deep cut from 0.8
    // The stored form, byte for byte: other deployments read it.
    expect(await hget(adjustmentField('governed', key))).toBe(
      `0.4000,${cutAt},blocks,0.8000,${cutAt},0.4000,blocks,0.8000`,
    );
    t.step(10_000);
    await a.setGoverned(key, 0.6, 'recovery', 0.4);
    const reader = adjustments(t.clock);
    await reader.refresh();
    expect(reader.governed(key)).toEqual({
      factor: 0.6,
      decidedAt: cutAt + 10_000,
      rule: 'recovery',
      from: 0.4,
      cutAt,
      cutFactor: 0.4,
      cutRule: 'blocks',
      cutFrom: 0.8,
    });
    expect(reader.factor(key)).toBe(0.6);
    expect(reader.loweredAt(key)).toBeUndefined(); // a step up sends nothing back
    expect(reader.governedKeys()).toContain(key);
    await a.setGoverned(key, 1, 'recovery');
    await reader.refresh();
    expect(reader.governed(key)).toBeUndefined();
    expect(reader.governedKeys()).not.toContain(key);
    // Backpressure's factor again, recovered long since on this clock.
    expect(reader.factor(key)).toBe(1);
  });

  it('opens and closes circuits, recording when each closed', async () => {
    const t = steppedClock();
    const a = adjustments(t.clock);
    const reader = adjustments(t.clock);
    const name = `r-${randomUUID()}|default|default`;
    const state = { untilMs: t.clock() + 30_000, openForMs: 30_000, probes: 3, rule: 'blocks' };
    await a.setCircuit(name, state);
    await reader.refresh();
    expect(reader.circuit(name)).toEqual(state);
    expect(reader.circuits()).toContain(name);
    expect(await hget(adjustmentField('circuit', name))).toBe(`${state.untilMs},30000,3,blocks`);
    expect(reader.circuitClosedAt(name)).toBeUndefined();
    t.step(5_000);
    await a.setCircuit(name, undefined);
    expect(a.circuit(name)).toBeUndefined();
    expect(a.circuitClosedAt(name)).toBe(state.untilMs - 25_000);
    await reader.refresh();
    expect(reader.circuits()).not.toContain(name);
    expect(reader.circuitClosedAt(name)).toBe(state.untilMs - 25_000);
  });

  it('pauses campaigns and keeps the first warm-up day a pool was given', async () => {
    const t = steppedClock();
    const a = adjustments(t.clock);
    const b = adjustments(t.clock);
    const id = randomUUID();
    await a.setCampaignPause(id, t.clock() + 60_000, 'complaints');
    await b.refresh();
    expect(b.campaignPause(id)).toEqual({ untilMs: t.clock() + 60_000, rule: 'complaints' });
    expect(b.campaignPauses()).toContain(id);
    await a.setCampaignPause(id, undefined);
    await b.refresh();
    expect(b.campaignPause(id)).toBeUndefined();

    const pool = `p-${randomUUID()}`;
    const day = t.clock();
    await a.setWarmup(pool, { step: 0, dayStart: day, state: 'warming' }, { onlyIfAbsent: true });
    await b.setWarmup(pool, { step: 0, dayStart: day + 1, state: 'warming' }, { onlyIfAbsent: true });
    expect(b.warmup(pool)).toEqual({ step: 0, dayStart: day, state: 'warming' });
    await a.setWarmup(pool, { step: 4, dayStart: day + 86_400_000, state: 'active' });
    await b.refresh();
    expect(b.warmup(pool)).toEqual({ step: 4, dayStart: day + 86_400_000, state: 'active' });
  });
});

describe('overrides', () => {
  it('bind while in force, end by themselves on the clock, and are swept with an audit entry', async () => {
    const t = steppedClock();
    const reader = adjustments(t.clock);
    const layerKey = keys.bucket('receiver', `r-${randomUUID()}`);
    const o: OverrideState = {
      scope: 'receiver',
      name: layerKey,
      kind: 'pause',
      untilMs: t.clock() + 60_000,
      actor: 'ops',
      reason: 'test',
      setAt: t.clock(),
    };
    await redis.hset(keys.adjustments(), adjustmentField('override', layerKey), encodeAdjustment('override', o));
    const unreadable = keys.bucket('tenant', `t-${randomUUID()}`);
    await redis.hset(keys.adjustments(), adjustmentField('override', unreadable), '{not json');
    await reader.refresh();
    expect(reader.override(layerKey)).toEqual(o);
    expect(reader.override(unreadable)).toBeUndefined();
    expect(reader.overrides()).toContainEqual({ ...o, layerKey });
    t.step(60_000);
    expect(reader.override(layerKey)).toBeUndefined();
    expect(reader.overrides().map((x) => x.layerKey)).not.toContain(layerKey);
    const swept = await sweepOverrides(redis, keys, t.clock());
    expect(swept).toContainEqual(o);
    expect(await hget(adjustmentField('override', layerKey))).toBeNull();
    expect(await hget(adjustmentField('override', unreadable))).toBeNull();
    const audit = await redis.xrange(keys.audit(), '-', '+');
    expect(audit.filter(([, f]) => f.includes(layerKey))).toHaveLength(1);
  });
});

describe('recipient holds', () => {
  it('holds a busy recipient for every process, by a hash of its address, until the hold ends', async () => {
    const t = steppedClock();
    const writer = adjustments(t.clock);
    const reader = adjustments(t.clock);
    await reader.start();
    expect(await writer.holdRecipient('Hot@Busy.test', t.clock() + 60_000)).toBe(true);
    await reader.refresh();
    // Any case of the address is the same recipient; another recipient is not held.
    expect(reader.recipientHeldUntil('hot@busy.test')).toBe(t.clock() + 60_000);
    expect(reader.recipientHeldUntil('cold@busy.test')).toBeUndefined();
    // No address sits in the shared hash.
    expect(Object.keys(await redis.hgetall(keys.adjustments())).join()).not.toContain('busy.test');
    // A shorter hold does not cut a longer one short.
    await writer.holdRecipient('hot@busy.test', t.clock() + 1_000);
    await reader.refresh();
    expect(reader.recipientHeldUntil('hot@busy.test')).toBe(t.clock() + 60_000);
    t.step(60_001);
    expect(reader.recipientHeldUntil('hot@busy.test')).toBeUndefined();
  });

  it('keeps at most MAX_RECIPIENT_HOLDS in force, and an ended hold makes room', async () => {
    const t = steppedClock();
    const a = adjustments(t.clock);
    for (let i = 0; i < MAX_RECIPIENT_HOLDS; i++)
      expect(await a.holdRecipient(`r${i}@x.test`, t.clock() + 1_000)).toBe(true);
    expect(await a.holdRecipient('one-more@x.test', t.clock() + 1_000)).toBe(false);
    expect(a.recipientHeldUntil('one-more@x.test')).toBeUndefined();
    t.step(1_001);
    expect(await a.holdRecipient('one-more@x.test', t.clock() + 1_000)).toBe(true);
    // The ended holds were taken out of the hash, not left to every reader.
    expect(await redis.hlen(keys.adjustments())).toBe(1);
  });
});
