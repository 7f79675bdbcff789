import { describe, expect, it } from 'vitest';
import { useRedisPrefix } from '../../../test/support/redis-prefix.js';
import { circuitId, jobIdOf } from '@sluice/core';
import { OVERRIDE_RECHECK_MS } from '@sluice/dispatch';
import { DAY_MS, useRig } from './admission-setup.js';

// The scheduler's check order (docs/design/flow.md), run by the admission engine on real Redis with
// a clock that moves only when stepped.
const r = useRedisPrefix();
const rig = useRig(r);

describe('admission: record, suppression and expiry', () => {
  it('ends a suppressed recipient as suppressed before its expiry is looked at, and a second run as a duplicate', async () => {
    const { admission, limiter, suppress, message, record, now } = rig();
    await suppress('default', 'ann@gmail.com');
    const m = message({ expiresAt: now() - 1 }); // expired as well
    expect(await admission.admit(m)).toEqual({ kind: 'final', state: 'suppressed' });
    expect((await record(m.id)).state).toBe('suppressed');
    expect(await admission.admit(m)).toEqual({ kind: 'duplicate', state: 'suppressed' });
    expect(limiter.calls).toBe(0);
  });

  it('ends an expired message as expired and never dispatches it', async () => {
    const { admission, limiter, queues, message, record, step } = rig();
    const m = message({ priority: 'critical' });
    step(15 * 60_000); // critical mail lives 15 minutes
    expect(await admission.admit(m)).toEqual({ kind: 'final', state: 'expired' });
    expect((await record(m.id)).state).toBe('expired');
    expect(await queues.dispatch('critical').getJob(jobIdOf(m))).toBeUndefined();
    expect(limiter.calls).toBe(0);

    // A minute younger, the same message goes.
    const young = message({ priority: 'critical', acceptedAt: rig().now() - 14 * 60_000 });
    expect(await admission.admit(young)).toMatchObject({ kind: 'dispatched' });
  });
});

describe('admission: route and warm-up', () => {
  it('ends an expired retry unconfirmed when an earlier attempt was ambiguous (that copy may have arrived)', async () => {
    const { admission, store, message, record, step } = rig();
    const m = message({ priority: 'critical' });
    await store.accept(m);
    await store.markSubmitted(m.id);
    await store.markAmbiguous(m.id);
    await store.markRetrying(m.id, { reply: '', outcome: 'ambiguous', retryAt: Date.now(), hop: 1 });
    step(15 * 60_000);
    expect(await admission.admit({ ...m, hop: 1 })).toMatchObject({ kind: 'final' });
    expect((await record(m.id)).state).toBe('unconfirmed');
  });

  it('delays a message whose every provider is paused until the pause ends; a campaign holds its queue', async () => {
    const { admission, adjustments, limiter, message, record, now } = rig();
    await adjustments.pause('main', now() + 30_000, 'daily quota');
    const m = message();
    expect(await admission.admit(m)).toEqual({
      kind: 'wait',
      at: now() + 30_000,
      note: {
        by: 'provider',
        key: 'transactional',
        untilMs: now() + 30_000,
        reason: 'every provider of stream transactional is paused: daily quota',
      },
    });
    expect((await record(m.id)).state).toBe('queued');
    const c = message({ campaignId: 'spring' });
    expect(await admission.admit(c, { campaignQueue: '{campaign-spring}' })).toMatchObject({
      kind: 'hold',
      ms: 30_000,
      note: { by: 'provider' },
    });
    expect(limiter.calls).toBe(0);

    // With a spare on the route, it fails over instead.
    expect(await admission.admit(message({ stream: 'both' }))).toMatchObject({
      kind: 'dispatched',
      data: { provider: 'spare', failover: true },
    });
  });

  it('sends a warming pool its day’s cap for a receiver, then an active pool of the route, else waits for the next day', async () => {
    const { admission, adjustments, warmup, message } = rig();
    const bulk = () => message({ stream: 'bulk' });
    expect(await admission.admit(bulk())).toMatchObject({ kind: 'dispatched', data: { provider: 'fresh' } });
    expect(await admission.admit(bulk())).toMatchObject({ kind: 'dispatched', data: { provider: 'fresh' } });
    // Over the cap for gmail: the active pool of the route takes it, not as a failover.
    const third = await admission.admit(bulk());
    expect(third).toMatchObject({ kind: 'dispatched', data: { provider: 'main' } });
    expect(third.kind === 'dispatched' && third.data.failover).toBeFalsy();
    // Another receiver has a cap of its own.
    expect(await admission.admit(message({ stream: 'bulk', to: 'bo@slow.example' }))).toMatchObject({
      data: { provider: 'fresh' },
    });

    // The active pool paused for longer than the day: it waits for the day's end.
    await adjustments.pause('main', rig().now() + 2 * DAY_MS, 'daily quota');
    const at = warmup.dayEndsAt('new');
    expect(await admission.admit(bulk())).toEqual({
      kind: 'wait',
      at,
      note: { by: 'warmup', key: 'new', untilMs: at, reason: "day's cap for gmail reached" },
    });

    // The active pool's provider down instead: it waits too. Admitted to `main`, a worker would
    // hand it straight back (the warming pool routes better), round and round without end.
    await adjustments.pause('main', undefined);
    await adjustments.markDown('main', 2 * DAY_MS, 'no answer');
    expect(await admission.admit(bulk())).toEqual({
      kind: 'wait',
      at,
      note: { by: 'warmup', key: 'new', untilMs: at, reason: "day's cap for gmail reached; main is down" },
    });
  });
});

describe('admission: circuits', () => {
  it('delays a message whose circuit is open and gives its warm-up send back; half-open lets a probe through', async () => {
    const { admission, adjustments, limiter, warmup, message, redis, keys, now, step } = rig();
    const circuit = circuitId({ receiver: 'gmail', pool: 'new', stream: 'bulk' });
    const opened = now();
    await adjustments.setCircuit(circuit, { untilMs: opened + 10_000, openForMs: 5_000, probes: 1, rule: 'blocks' });
    const m = message({ stream: 'bulk' });
    expect(await admission.admit(m)).toEqual({
      kind: 'wait',
      at: opened + 10_000,
      note: { by: 'circuit', key: circuit, untilMs: opened + 10_000, reason: 'circuit open (blocks)' },
    });
    expect(limiter.calls).toBe(0);
    // The send taken from the day's cap went back: both of the cap are still there.
    const dayStart = adjustments.warmup('new')!.dayStart;
    expect(await redis.hget(keys.warmupSent('new', dayStart), 'gmail')).toBe('0');
    // Another stream's circuit is its own: not held.
    expect(await admission.admit(message())).toMatchObject({ kind: 'dispatched' });

    // Half-open: one probe a period goes, the next waits for the next period.
    step(10_000);
    expect(await admission.admit(m)).toMatchObject({ kind: 'dispatched', data: { provider: 'fresh' } });
    expect(await admission.admit(message({ stream: 'bulk' }))).toMatchObject({
      kind: 'wait',
      at: opened + 15_000,
      note: { by: 'circuit' },
    });
    expect(await redis.hget(keys.warmupSent('new', dayStart), 'gmail')).toBe('1');
    expect(warmup.stateOf('new')).toBe('warming');
  });
});

describe('admission: overrides', () => {
  it('holds a message on a paused or suspended layer before the limiter is asked', async () => {
    const { admission, limiter, override, message, record, now } = rig();
    await override({ scope: 'receiver', name: 'gmail', kind: 'pause', untilMs: now() + 10_000 });
    const m = message();
    expect(await admission.admit(m)).toEqual({
      kind: 'wait',
      at: now() + 10_000,
      note: {
        by: 'override',
        key: 'receiver:gmail',
        untilMs: now() + 10_000,
        reason: 'pause by ops@example.com: incident',
      },
    });
    // A long one is looked at again within a minute.
    await override({ scope: 'provider', name: 'main', kind: 'suspend', untilMs: now() + 3_600_000 });
    expect(await admission.admit(message({ to: 'bo@slow.example' }))).toMatchObject({
      kind: 'wait',
      at: now() + OVERRIDE_RECHECK_MS,
      note: { key: 'provider:main' },
    });
    // A campaign's own pause holds its whole queue; another layer's holds the message alone.
    await override({ scope: 'campaign', name: 'spring', kind: 'pause', untilMs: now() + 20_000 });
    const ctx = { campaignQueue: '{campaign-spring}' };
    expect(
      await admission.admit(message({ to: 'cy@other.example', stream: 'bulk', campaignId: 'spring' }), ctx),
    ).toMatchObject({
      kind: 'hold',
      ms: 20_000,
      note: { by: 'override', key: 'campaign:spring' },
    });
    expect(await admission.admit(message({ campaignId: 'spring' }), ctx)).toMatchObject({
      kind: 'wait',
      note: { key: 'provider:main' },
    });
    expect(limiter.calls).toBe(0);
    expect((await record(m.id)).state).toBe('queued');

    // A rate override is no stop: it only sets the rate.
    await override({ scope: 'tenant', name: 'default', kind: 'rate', rate: 5, untilMs: now() + 10_000 });
    expect(await admission.admit(message({ to: 'di@other.example', stream: 'bulk' }))).toMatchObject({
      kind: 'dispatched',
      data: { provider: 'fresh' },
    });
    expect(limiter.calls).toBe(1);
  });
});
