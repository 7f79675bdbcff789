import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseConfig, type Keys } from '@sluice/core';
import { route } from '@sluice/dispatch';
import { createAdjustments, type Adjustments } from '@sluice/throttle';
import { useRedisPrefix } from '../../../test/support/redis-prefix.js';

const r = useRedisPrefix();
let keys: Keys;
let adjustments: Adjustments;

beforeEach(() => {
  keys = r.keys;
  adjustments = createAdjustments({
    redis: r.redis,
    keys,
    backpressure: { factor: 0.5, minFactor: 0.05, cooldownMs: 0, holdMs: 60_000 },
  });
});
afterEach(() => {
  adjustments.close();
});

const config = parseConfig({
  providers: {
    ses: { kind: 'ses', sandbox: true, rate: 10 },
    sg: { kind: 'sendgrid', sandbox: true, rate: 10 },
    relay: { kind: 'smtp', sandbox: true, rate: 10 },
  },
  routes: {
    marketing: [
      { provider: 'ses', weight: 3 },
      { provider: 'sg', weight: 1 },
      { provider: 'relay', weight: 0 },
    ],
  },
});
const bucket = (p: string) => keys.bucket('provider', p);
function share(stream: string, n = 4000): Record<string, number> {
  const counts: Record<string, number> = {};
  for (let i = 0; i < n; i++) {
    const c = route(config, adjustments, bucket, stream);
    const name = 'provider' in c ? `${c.provider}${c.failover ? '*' : ''}` : 'wait';
    counts[name] = (counts[name] ?? 0) + 1;
  }
  for (const k of Object.keys(counts)) counts[k]! /= n;
  return counts;
}

describe('routing', () => {
  it('chooses by weight; a stream without a route goes to the default provider', () => {
    const s = share('marketing');
    expect(s.ses).toBeCloseTo(0.75, 1);
    expect(s.sg).toBeCloseTo(0.25, 1);
    expect(s.relay).toBeUndefined();
    expect(share('transactional')).toEqual({ ses: 1 });
  });

  it('fails over while a provider is down or throttled hard, to the weighted ones first, then standbys', async () => {
    await adjustments.markDown('ses', 60_000, 'refused');
    // Everything to sg: its own quarter, and ses's three quarters as failover.
    const s = share('marketing');
    expect(Object.keys(s).sort()).toEqual(['sg', 'sg*']);
    expect(s['sg*']).toBeCloseTo(0.75, 1);
    // Throttled hard: lowered to a quarter or less of its rate.
    await adjustments.slowDown(bucket('sg'));
    await adjustments.slowDown(bucket('sg'));
    expect(share('marketing')).toEqual({ 'relay*': 1 });
  });

  it('waits while every provider of the route is paused, until the first pause ends', async () => {
    const until = Date.now() + 30_000;
    for (const p of ['ses', 'sg', 'relay']) await adjustments.pause(p, until, 'daily quota');
    const choice = route(config, adjustments, bucket, 'marketing');
    expect(choice).toMatchObject({ reason: expect.stringMatching(/paused: daily quota/) });
    expect('waitMs' in choice && choice.waitMs).toBeGreaterThan(29_000);
    await adjustments.pause('relay', undefined);
    expect(route(config, adjustments, bucket, 'marketing')).toEqual({ provider: 'relay', failover: true });
  });
});
