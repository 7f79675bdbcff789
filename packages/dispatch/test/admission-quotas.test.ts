import { describe, expect, it } from 'vitest';
import { useRedisPrefix } from '../../../test/support/redis-prefix.js';
import { jobIdOf, type DispatchJobData } from '@sluice/core';
import type { AdmissionResult } from '@sluice/dispatch';
import { useRig } from './admission-setup.js';

// The last checks (class and quotas in one limiter call) and dispatch, run by the admission
// engine on real Redis. The limiter keeps Redis time; the engine's clock moves when stepped.
const r = useRedisPrefix();
const rig = useRig(r);

const dispatched = (r: AdmissionResult): DispatchJobData => {
  if (r.kind !== 'dispatched') throw new Error(`not dispatched: ${JSON.stringify(r)}`);
  return r.data;
};

describe('admission: the limiter and dispatch', () => {
  it('dispatches a granted message with its provider, receiver and receiver limit, and writes no record (it waits for the worker’s mark)', async () => {
    const { admission, queues, store, message, record, now } = rig();
    const m = { ...message(), ticket: { key: 'k', slice: 1, number: 3 } };
    await store.accept(m);
    await store.noteHeld(m.id, { by: 'override', key: 'receiver:gmail', untilMs: now() + 1000, reason: 'was paused' });
    const result = await admission.admit(m);
    expect(result).toMatchObject({ kind: 'dispatched', delay: 0 });
    const job = await queues.dispatch('normal').getJob(jobIdOf(m));
    expect(job?.data).toEqual(dispatched(result));
    expect(job?.data).toMatchObject({
      id: m.id,
      provider: 'main',
      receiver: 'gmail',
      receiverLimit: { rate: 50, burst: 5 },
      admittedAt: now(),
      decidedAt: now(),
    });
    expect(job?.data).not.toHaveProperty('ticket'); // a place in a line is for admission only
    expect(job?.data).not.toHaveProperty('failover');
    // The record is written by the worker's `submit` mark, which also clears the held note.
    expect(await record(m.id)).toEqual({ state: 'queued', heldBy: 'override' });
  });

  it('books a slot within the horizon: the dispatch job waits for it', async () => {
    const { admission, queues, message } = rig();
    // One slot each 50 ms at the receiver: the second and third are booked.
    const results = await Promise.all([1, 2, 3].map(() => admission.admit(message({ to: 'eve@mid.example' }))));
    const booked = results.filter((r) => r.kind === 'dispatched' && r.delay > 0);
    expect(booked.length).toBeGreaterThan(0);
    const first = booked[0]!;
    if (first.kind !== 'dispatched') throw new Error('unreachable');
    expect(first.data.admittedAt).toBe(rig().now() + first.delay);
    expect(await (await queues.dispatch('normal').getJob(jobIdOf(first.data)))?.getState()).toBe('delayed');
  });

  it('never books ahead on a failover: it takes what its target has free now', async () => {
    const { admission, adjustments, message } = rig();
    await adjustments.markDown('main', 60_000, 'no answer');
    const results = await Promise.all(
      [1, 2, 3].map(() => admission.admit(message({ stream: 'both', to: 'eve@mid.example' }))),
    );
    const sent = results.filter((r) => r.kind === 'dispatched');
    expect(sent.length).toBeGreaterThan(0);
    for (const r of sent) expect(r).toMatchObject({ delay: 0, data: { provider: 'spare', failover: true } });
    expect(results.some((r) => r.kind === 'wait')).toBe(true);
  });

  it('holds the campaign queue when a campaign-wide layer denies, and takes the jobs fetched with it back without asking again', async () => {
    const { admission, limiter, message, record, step } = rig();
    const ctx = { campaignQueue: '{campaign-spring}' };
    const spring = () => message({ campaignId: 'spring', priority: 'low' });
    expect(await admission.admit(spring(), ctx)).toMatchObject({ kind: 'dispatched' });
    const second = spring();
    const held = await admission.admit(second, ctx);
    expect(held).toMatchObject({
      kind: 'hold',
      note: { by: 'campaign', key: 'spring', reason: 'campaign queue held: quota busy' },
    });
    // The layer's wait (at most one interval of low's share: 1.25 s at 1/s less critical's
    // 20 %), then until half the horizon is free again.
    if (held.kind !== 'hold') throw new Error('unreachable');
    expect(held.ms).toBeGreaterThan(50);
    expect(held.ms).toBeLessThanOrEqual(1_250 + 50);
    expect((await record(second.id)).state).toBe('queued');
    expect(limiter.calls).toBe(2);

    // The next ones of that queue go back at once; another campaign's are asked for.
    expect(await admission.admit(spring(), ctx)).toEqual({ kind: 'held' });
    expect(await admission.admit(spring(), ctx)).toEqual({ kind: 'held' });
    expect(limiter.calls).toBe(2);
    expect(
      await admission.admit(message({ campaignId: 'autumn' }), { campaignQueue: '{campaign-autumn}' }),
    ).toMatchObject({ kind: 'dispatched' });
    expect(limiter.calls).toBe(3);

    // Once the hold is over (by the engine's clock), the limiter is asked again.
    step(held.ms + 1);
    expect((await admission.admit(spring(), ctx)).kind).not.toBe('held');
    expect(limiter.calls).toBe(4);
  });

  it('delays a message denied by its receiver with a place in the line, which it keeps', async () => {
    const { admission, keys, message, now } = rig();
    const slow = (over = {}) => message({ to: 'bo@slow.example', ...over });
    expect(await admission.admit(slow())).toMatchObject({
      kind: 'dispatched',
      data: { receiver: 'slowmail', receiverLimit: { rate: 1, burst: 1 } },
    });
    const second = slow();
    const waited = await admission.admit(second);
    expect(waited).toMatchObject({
      kind: 'wait',
      note: { by: 'receiver', key: 'slowmail', reason: 'quota busy: waits its turn' },
      ticket: { key: keys.bucket('receiver', 'slowmail') },
    });
    if (waited.kind !== 'wait' || !waited.ticket) throw new Error('unreachable');
    expect(waited.at).toBeGreaterThan(now());
    expect(waited.note.untilMs).toBe(waited.at);

    // A newcomer does not overtake it: its place comes after.
    const third = await admission.admit(slow());
    expect(third).toMatchObject({ kind: 'wait', ticket: { key: keys.bucket('receiver', 'slowmail') } });
    if (third.kind !== 'wait' || !third.ticket) throw new Error('unreachable');
    expect(third.ticket.number).toBeGreaterThan(waited.ticket.number);

    // Shown again, the same place: nothing new to keep on the job.
    const again = await admission.admit({ ...second, ticket: waited.ticket });
    expect(again).toMatchObject({ kind: 'wait', note: { by: 'receiver' } });
    expect(again).not.toHaveProperty('ticket');

    // A campaign's message denied by the receiver waits alone: its queue is not held.
    expect(await admission.admit(slow({ campaignId: 'spring' }), { campaignQueue: '{campaign-spring}' })).toMatchObject(
      {
        kind: 'wait',
        note: { by: 'receiver' },
      },
    );
  });
});
