import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createKeys, parseConfig, type Keys } from '@sluice/core';
import { createAdjustments, quotaLayers, slowFactor, type Adjustments } from '@sluice/throttle';

let redis: Redis;
let keys: Keys;
const open: Adjustments[] = [];

beforeAll(() => {
  redis = new Redis(inject('redisUrl'));
  keys = createKeys(`t-${randomUUID().slice(0, 8)}`);
});
afterAll(async () => {
  for (const a of open) a.close();
  await redis.del(keys.adjustments());
  await redis.quit();
});

const backpressure = { factor: 0.5, minFactor: 0.1, cooldownMs: 200, holdMs: 1_000 };
function adjustments(): Adjustments {
  const a = createAdjustments({ redis, keys, backpressure, refreshMs: 20 });
  open.push(a);
  return a;
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
    await new Promise((r) => setTimeout(r, 60));
    expect(reader.factor(key)).toBe(0.5);
    for (let i = 0; i < 5; i++) {
      await new Promise((r) => setTimeout(r, 210));
      await writer.slowDown(key);
    }
    await new Promise((r) => setTimeout(r, 60));
    expect(reader.factor(key)).toBe(0.1);
  });

  it('holds the lowered rate, then doubles it every hold period back to full', () => {
    const slow = { factor: 0.125, untilMs: 10_000 };
    expect(slowFactor(slow, 9_000, 1_000)).toBe(0.125);
    expect(slowFactor(slow, 10_500, 1_000)).toBe(0.25);
    expect(slowFactor(slow, 11_500, 1_000)).toBe(0.5);
    expect(slowFactor(slow, 13_000, 1_000)).toBe(1);
  });

  it('lowers the layers a message is admitted through, and caps the provider at its account limit', async () => {
    const a = adjustments();
    const config = parseConfig({
      providers: { ses: { kind: 'ses', rate: 100, burst: 20 } },
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
  });

  it('tells routing which providers are down or paused, until when', async () => {
    const a = adjustments();
    await a.markDown('sg', 60_000, '5 failures in a row');
    await a.pause('ses', Date.now() + 60_000, 'daily quota');
    const reader = adjustments();
    await reader.refresh();
    expect(reader.standing('sg')).toMatchObject({ state: 'down', reason: '5 failures in a row' });
    expect(reader.standing('ses')).toMatchObject({ state: 'paused', reason: 'daily quota' });
    expect(reader.standing('mg')).toEqual({ state: 'ok' });
    await a.pause('ses', undefined);
    await reader.refresh();
    expect(reader.standing('ses')).toEqual({ state: 'ok' });
  });
});
