import type { Redis } from 'ioredis';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { Queue } from 'bullmq';
import { QUEUE_OPTIONS, parseConfig, type Keys, type SluiceConfig } from '@sluice/core';
import { createSignals } from '@sluice/throttle';
import { useRedisPrefix } from '../../../test/support/redis-prefix.js';
import { createStatus, type Status } from '../src/status.js';
import type { Override } from '../src/types.js';

const r = useRedisPrefix();
let redis: Redis;
let keys: Keys;
let config: SluiceConfig;
let status: Status;
const queues: Queue[] = [];
/** The time the status reads (the test fixes it). */
let at = 0;

beforeEach(() => {
  redis = r.redis;
  keys = r.keys;
  config = parseConfig({
    redis: { url: r.url, prefix: r.prefix },
    providers: { ses: { kind: 'ses', sandbox: true, rate: 100, burst: 20 } },
    receivers: [{ name: 'google', domains: ['gmail.com'], rate: 40 }],
  });
  status = createStatus({ config, redis, keys, clock: () => at });
});

afterEach(async () => {
  await status.close();
  for (const q of queues.splice(0)) await q.close();
});

it('shows every key, queue, latency, outcome, circuit, override and campaign the fleet wrote', async () => {
  const now = Date.now();
  // The snapshot reads at this test's now: a second that begins meanwhile moves nothing.
  at = now;
  // Sends of the last seconds, as workers count them (buckets of finished seconds). Six:
  // the send rate reads the last five whole ones, the totals all six.
  const signals = createSignals({ redis, keys, flushMs: 60_000 });
  for (let s = 1; s <= 6; s++) {
    const start = signals.bucketOf(now) - s * 1000;
    await redis.hset(keys.signals('provider', 'ses', start), {
      attempted: 20,
      accepted: 17,
      'deferred:throttled': 2,
      recipient_deferred: 1,
      rejected: 1,
    });
    await redis.hset(keys.signals('receiver', 'google', start), { attempted: 10, accepted: 10 });
    await redis.zadd(keys.signalIndex('receiver'), now, 'google');
  }
  await signals.close();
  // The governor lowered google to half; an operator set ses to 60/s; a circuit is open.
  const sesOverride: Override = {
    scope: 'provider',
    name: 'ses',
    kind: 'rate',
    rate: 60,
    untilMs: now + 60_000,
    actor: 'alice',
    reason: 'test',
    setAt: now,
  };
  await redis.hset(keys.adjustments(), {
    [`gov:${keys.bucket('receiver', 'google')}`]: `0.5000,${now},r,1.0000,${now},0.5000,r,1.0000`,
    [`ovr:${keys.bucket('provider', 'ses')}`]: JSON.stringify(sesOverride),
    [`ovr:${keys.bucket('tenant', 'old')}`]: JSON.stringify({
      ...sesOverride,
      scope: 'tenant',
      name: 'old',
      untilMs: now - 1,
    }),
    'circuit:google|default|default': `${now + 30_000},30000,3,blocks`,
  });
  // The ses bucket is 0.5 s ahead: its shared slice has spent some of its burst.
  const [sec, usec] = await redis.time();
  await redis.hset(keys.bucket('provider', 'ses'), '1', String(Number(sec) * 1e6 + Number(usec) + 500_000));
  // A campaign, paused, with counters and a backlog; latency samples of two classes.
  await redis.hset(keys.campaign('spring'), {
    createdAt: String(now),
    name: 'Spring',
    priority: 'low',
    paused: '1',
  });
  // Its counters live in its parts in the message homes, summed by the status.
  await redis.hset(keys.campaignHome('spring', 0), { 'n:accepted': '6', 'n:sent': '4' });
  await redis.hset(keys.campaignHome('spring', 9), { 'n:accepted': '4', 'n:rejected': '1' });
  await redis.sadd(keys.campaigns(), 'spring');
  const q = new Queue(keys.campaignQueue('spring'), { ...QUEUE_OPTIONS, connection: redis, prefix: keys.prefix });
  queues.push(q);
  await q.add('m1', { n: 1 }, { timestamp: now - 7_000 });
  await q.add('m2', { n: 2 });
  await q.add('m3', { n: 3 }, { delay: 60_000 });
  await redis.lpush(`${keys.prefix}:latency:critical`, ...Array.from({ length: 100 }, (_, i) => i + 1));
  await redis.lpush(`${keys.prefix}:latency:low`, 5000);

  const s = await status.snapshot();

  const ses = s.keys.find((k) => k.scope === 'provider' && k.name === 'ses')!;
  expect(ses).toMatchObject({ configuredRate: 100, effectiveRate: 60, factor: 1, sendRate: 20, override: sesOverride });
  // 60/s in the 80% shared slice: T = 20.8 ms; burst 20 less 3 of slack = 16 in the slice; 0.5 s spent = 24 sends → none left.
  expect(ses.tokens).toBe(0);
  const google = s.keys.find((k) => k.scope === 'receiver' && k.name === 'google')!;
  expect(google).toMatchObject({ configuredRate: 40, effectiveRate: 20, factor: 0.5, sendRate: 10 });
  expect(google.tokens).toBeGreaterThan(0);
  expect(s.keys.find((k) => k.scope === 'pool' && k.name === 'default')).toMatchObject({ factor: 1, sendRate: 0 });
  expect(s.keys.find((k) => k.scope === 'campaign' && k.name === 'spring')).toMatchObject({
    configuredRate: config.defaults.campaign.rate,
  });
  expect(s.keys.find((k) => k.scope === 'tenant' && k.name === 'default')).toBeDefined();

  expect(s.overrides).toEqual([sesOverride]); // the expired one is not in force
  expect(s.circuits).toEqual([{ name: 'google|default|default', state: 'open', untilMs: now + 30_000 }]);
  expect(s.latency.critical).toEqual({ p50: 50, p95: 95, samples: 100 });
  expect(s.latency.low).toEqual({ p50: 5000, p95: 5000, samples: 1 });
  expect(s.latency.high).toBeUndefined();
  expect(s.outcomes).toEqual({
    recipients: 108,
    attempts: 120,
    accepted: 102,
    deferred: 12,
    deferredRecipients: 6,
    rejected: 6,
    retries: 12,
    attemptsPerRecipient: 120 / 108,
  });

  const spring = s.queues.find((x) => x.queue === '{campaign-spring}')!;
  expect(spring).toMatchObject({
    kind: 'campaign',
    campaignId: 'spring',
    priority: 'low',
    waiting: 2,
    delayed: 1,
    active: 0,
  });
  expect(spring.oldestAgeMs).toBeGreaterThanOrEqual(7_000);
  expect(s.queues.map((x) => x.queue)).toEqual(
    expect.arrayContaining([
      '{intake-critical}',
      '{intake-low}',
      'dispatch-critical-{b32.76}',
      'dispatch-low-{b32.76}',
    ]),
  );
  expect(s.queues.find((x) => x.queue === 'dispatch-normal-{b32.76}')).toMatchObject({
    waiting: 0,
    delayed: 0,
    active: 0,
    oldestAgeMs: 0,
  });
  expect(s.campaigns).toEqual([
    {
      id: 'spring',
      name: 'Spring',
      priority: 'low',
      state: 'paused',
      counts: {
        accepted: 10,
        sent: 4,
        rejected: 1,
        suppressed: 0,
        expired: 0,
        cancelled: 0,
        unconfirmed: 0,
        pending: 5,
      },
    },
  ]);

  // Totals are folded once: a second snapshot counts the same buckets the same.
  expect((await status.snapshot()).outcomes.attempts).toBe(120);
  console.log(
    `status: ${s.keys.length} keys, ${s.queues.length} queues; ses tokens ${ses.tokens}, google tokens ${google.tokens}`,
  );
});

it('shows the share of a receiver’s replies it could not read, and the governor’s alerts of the last 15 minutes', async () => {
  const now = Date.now();
  at = now;
  const signals = createSignals({ redis, keys, flushMs: 60_000 });
  for (let s = 1; s <= 5; s++) {
    const start = signals.bucketOf(now) - s * 1000;
    await redis.hset(keys.signals('receiver', 'google', start), { attempted: 20, accepted: 18, 'deferred:unknown': 2 });
  }
  await signals.close();
  const alert = (minutesAgo: number, name: string): string =>
    JSON.stringify({
      at: now - minutesAgo * 60_000,
      rule: 'unknown-replies',
      version: 'v',
      scope: 'receiver',
      name,
      action: 'alert',
      from: 1,
      to: 1,
      inputs: { signal: 'deferred:unknown', count: 12, over: 'attempted', volume: 200, ratio: 0.06, windowMs: 60_000 },
    });
  // An old alert, a cut that is not an alert, and a recent alert: only the last shows.
  await redis.xadd(keys.governorLog(), `${now - 20 * 60_000}-0`, 'decision', alert(20, 'yahoo'));
  await redis.xadd(
    keys.governorLog(),
    `${now - 60_000}-0`,
    'decision',
    JSON.stringify({ at: now - 60_000, action: 'lower', rule: 'soft-bounces', scope: 'receiver', name: 'google' }),
  );
  await redis.xadd(keys.governorLog(), `${now - 30_000}-0`, 'decision', alert(0.5, 'google'));
  const s = await status.snapshot();
  expect(s.keys.find((k) => k.scope === 'receiver' && k.name === 'google')?.unknownShare).toBeCloseTo(0.1);
  expect(s.alerts).toEqual([
    {
      at: now - 30_000,
      rule: 'unknown-replies',
      scope: 'receiver',
      name: 'google',
      signal: 'deferred:unknown',
      count: 12,
      volume: 200,
      ratio: 0.06,
    },
  ]);
});
