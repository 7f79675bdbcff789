import type { DispatchJobData } from '@sluice/core';
import { describe, expect, it } from 'vitest';
import { useRedisPrefix } from '../../../test/support/redis-prefix.js';
import { jobOf, sentTo, useDelivery, type Setup } from './delivery-setup.js';

// Ambiguous attempts, in process through the SMTP adapter and the sandbox on real Redis:
// a connection lost after DATA (the sandbox got the message, the answer never came) and an
// attempt found `submitted` by the next one (its worker died after the mark). Each is in
// the attempt log and in a warn line, and a message whose attempts ran out after one of
// them ends `unconfirmed`: it may have been delivered, so it is neither `rejected` nor
// `expired` (docs/design/delivery-and-replies.md).

const r = useRedisPrefix();
const { setup, admitted } = useDelivery(r);

const DROP = { default: { dropAfterData: ['lost@*'] } };
const COUNTED_AS_SENT = 'final: counted as sent (delivery.onAmbiguous: assume-sent)';

/** The warn lines the engine wrote about `id`'s ambiguous attempts. */
const warned = (s: Setup, id: string) =>
  s.logs.filter((l) => l.id === id && String(l.msg).startsWith('ambiguous attempt'));

/** As admission would: the retry `m` was given back with, admitted again (its delayed job taken). */
async function admittedAgain(s: Setup, m: DispatchJobData): Promise<DispatchJobData> {
  const [job, ...more] = await s.queues.intakeOf(m).getDelayed();
  expect(more).toEqual([]);
  await job!.remove();
  await s.store.markDispatched(m.id);
  return { ...m, hop: job!.data.hop, retry: job!.data.retry };
}

/** A worker that died after the request went out in full: the record says `submitted`. */
async function diedAfterSubmitting(s: Setup, m: DispatchJobData): Promise<void> {
  await s.store.markSubmitted(m.id, { campaignId: m.campaignId });
}

describe('a connection lost after DATA', () => {
  it('under resend (critical): counted, in the attempt log and a warn line, and resent through admission', async () => {
    const s = await setup(DROP);
    const m = await admitted(s, 'lost@drop.test', { campaignId: undefined, priority: 'critical' });
    await s.delivery.deliver(jobOf(m), s.gate);
    expect(await s.store.get(m.id)).toMatchObject({ state: 'retrying', ambiguous: 1, lastOutcome: 'ambiguous' });
    const log = await s.store.attempts(m.id);
    expect(log).toMatchObject([
      { outcome: 'ambiguous', provider: 'relay', action: expect.stringMatching(/^retry in/) },
    ]);
    expect(log[0]!.reply).not.toBe('');
    expect(log[0]).not.toHaveProperty('foundSubmitted');
    expect(warned(s, m.id)).toMatchObject([
      { level: 40, provider: 'relay', priority: 'critical', foundSubmitted: false, action: log[0]!.action },
    ]);
    expect((await s.queues.intake('critical').getDelayed()).map((j) => j.data.retry)).toEqual([
      { failures: 1, byFamily: { ambiguous: 1 } },
    ]);
    // The sandbox did get it: that is why it is ambiguous.
    expect(sentTo(s, 'lost@drop.test')).toBe(1);
  });

  it('under assume-sent (normal): counted as sent, logged, never resent', async () => {
    const s = await setup(DROP);
    const m = await admitted(s, 'lost@drop.test');
    await s.delivery.deliver(jobOf(m), s.gate);
    expect(await s.store.get(m.id)).toMatchObject({ state: 'sent', ambiguous: 1, lastOutcome: 'ambiguous' });
    expect(await s.store.attempts(m.id)).toMatchObject([{ outcome: 'ambiguous', action: COUNTED_AS_SENT }]);
    expect(warned(s, m.id)).toMatchObject([{ level: 40, action: COUNTED_AS_SENT }]);
    expect(await s.queues.campaign('spring').count()).toBe(0);
  });
});

describe('an attempt found submitted (its worker died after the mark)', () => {
  it('under assume-sent: counted as sent without a send, and logged as found', async () => {
    const s = await setup();
    const m = await admitted(s, 'ok@accept.test');
    await diedAfterSubmitting(s, m);
    await s.delivery.deliver(jobOf(m), s.gate);
    expect(await s.store.get(m.id)).toMatchObject({ state: 'sent', ambiguous: 1, lastOutcome: 'ambiguous' });
    expect(sentTo(s, 'ok@accept.test')).toBe(0);
    const log = await s.store.attempts(m.id);
    expect(log).toMatchObject([
      { outcome: 'ambiguous', provider: 'relay', foundSubmitted: true, action: COUNTED_AS_SENT },
    ]);
    expect(log[0]!.reply).toMatch(/submitted/);
    expect(warned(s, m.id)).toMatchObject([{ level: 40, foundSubmitted: true, action: COUNTED_AS_SENT }]);
  });

  it('under resend: logged as found and resent now; the resend accepted → sent', async () => {
    const s = await setup();
    const m = await admitted(s, 'ok@accept.test', { priority: 'critical', campaignId: undefined });
    await diedAfterSubmitting(s, m);
    await s.delivery.deliver(jobOf(m), s.gate);
    expect(await s.store.get(m.id)).toMatchObject({
      state: 'sent',
      attempts: 2,
      ambiguous: 1,
      lastOutcome: 'accepted',
    });
    expect(sentTo(s, 'ok@accept.test')).toBe(1);
    expect(await s.store.attempts(m.id)).toMatchObject([
      { outcome: 'ambiguous', foundSubmitted: true, action: 'resent now (delivery.onAmbiguous: resend)' },
      { outcome: 'accepted', action: 'final: sent' },
    ]);
    expect(warned(s, m.id)).toMatchObject([
      { foundSubmitted: true, action: 'resent now (delivery.onAmbiguous: resend)' },
    ]);
  });

  it('under resend with its lifetime over: unconfirmed, not expired, and not sent', async () => {
    const s = await setup();
    const m = await admitted(s, 'ok@accept.test', { priority: 'critical', expiresAt: s.now + 1_000 });
    await diedAfterSubmitting(s, m);
    s.now += 1_000;
    await s.delivery.deliver(jobOf(m), s.gate);
    expect(await s.store.get(m.id)).toMatchObject({ state: 'unconfirmed', ambiguous: 1 });
    expect(sentTo(s, 'ok@accept.test')).toBe(0);
    expect(await s.store.attempts(m.id)).toMatchObject([
      { outcome: 'ambiguous', foundSubmitted: true, action: expect.stringMatching(/^final: unconfirmed/) },
    ]);
    expect(await s.store.campaignCounts('spring')).toMatchObject({ unconfirmed: 1, expired: 0 });
  });
});

describe('the final state after an ambiguous attempt', () => {
  it('ambiguous on every attempt (critical, resend): unconfirmed, not rejected; every copy arrived', async () => {
    const s = await setup(DROP);
    let m = await admitted(s, 'lost@drop.test', { priority: 'critical' });
    // delivery.retry.ambiguous.maxAttempts: 3 by default.
    for (let attempt = 1; attempt <= 3; attempt++) {
      if (attempt > 1) m = await admittedAgain(s, m);
      await s.delivery.deliver(jobOf(m), s.gate);
    }
    const record = await s.store.get(m.id);
    expect(record).toMatchObject({ state: 'unconfirmed', attempts: 3, ambiguous: 3 });
    expect(record?.lastOutcome).toMatch(/^attempts_exhausted: 3 × ambiguous/);
    expect(record?.lastReply).toBeTruthy();
    const log = await s.store.attempts(m.id);
    expect(log.map((a) => a.outcome)).toEqual(['ambiguous', 'ambiguous', 'ambiguous']);
    expect(log[2]!.action).toMatch(/^final: unconfirmed \(attempts_exhausted/);
    expect(warned(s, m.id)).toHaveLength(3);
    expect(await s.store.campaignCounts('spring')).toMatchObject({ unconfirmed: 1, rejected: 0, sent: 0 });
    expect(await s.queues.intakeOf(m).count()).toBe(0);
    expect(sentTo(s, 'lost@drop.test')).toBe(3);
  });

  it('ambiguous, then its lifetime over before the resend: unconfirmed, not expired', async () => {
    const s = await setup(DROP);
    // The ambiguous family's first backoff is at least 2.5 s: longer than the message has.
    const m = await admitted(s, 'lost@drop.test', { priority: 'critical', expiresAt: Date.now() + 1_000 });
    await s.delivery.deliver(jobOf(m), s.gate);
    expect(await s.store.get(m.id)).toMatchObject({
      state: 'unconfirmed',
      ambiguous: 1,
      lastOutcome: 'ambiguous: lifetime over before the next attempt',
    });
    expect(await s.store.campaignCounts('spring')).toMatchObject({ unconfirmed: 1, expired: 0 });
  });

  it('ambiguous, then temporary failures until the attempts ran out: unconfirmed (the first copy may be there)', async () => {
    const s = await setup(DROP, { delivery: { retry: { transient_system: { maxAttempts: 1 } } } });
    let m = await admitted(s, 'lost@drop.test', { priority: 'critical' });
    await s.delivery.deliver(jobOf(m), s.gate);
    s.sandbox.setScenario({ default: { fail: ['lost@*'] } });
    m = await admittedAgain(s, m);
    await s.delivery.deliver(jobOf(m), s.gate);
    expect(await s.store.get(m.id)).toMatchObject({ state: 'unconfirmed', attempts: 2, ambiguous: 1 });
    expect(await s.store.attempts(m.id)).toMatchObject([
      { outcome: 'ambiguous', action: expect.stringMatching(/^retry in/) },
      { outcome: 'deferred', family: 'transient_system', action: expect.stringMatching(/^final: unconfirmed/) },
    ]);
  });

  it('ambiguous, then refused (550 5.1.1): rejected, the refusal is an answer; the record still counts the ambiguous copy', async () => {
    const s = await setup(DROP);
    let m = await admitted(s, 'lost@drop.test', { priority: 'critical' });
    await s.delivery.deliver(jobOf(m), s.gate);
    s.sandbox.setScenario({ default: { bounce: ['lost@*'] } });
    m = await admittedAgain(s, m);
    await s.delivery.deliver(jobOf(m), s.gate);
    expect(await s.store.get(m.id)).toMatchObject({ state: 'rejected', ambiguous: 1, lastOutcome: 'bad_recipient' });
    expect(await s.store.suppressed('acme', 'lost@drop.test')).not.toBeNull();
    expect(await s.store.campaignCounts('spring')).toMatchObject({ rejected: 1, unconfirmed: 0 });
  });

  it('ambiguous, then accepted: sent', async () => {
    const s = await setup(DROP);
    let m = await admitted(s, 'lost@drop.test', { priority: 'critical' });
    await s.delivery.deliver(jobOf(m), s.gate);
    s.sandbox.setScenario({});
    m = await admittedAgain(s, m);
    await s.delivery.deliver(jobOf(m), s.gate);
    expect(await s.store.get(m.id)).toMatchObject({
      state: 'sent',
      attempts: 2,
      ambiguous: 1,
      lastOutcome: 'accepted',
    });
    expect((await s.store.attempts(m.id)).map((a) => a.outcome)).toEqual(['ambiguous', 'accepted']);
    expect(await s.store.campaignCounts('spring')).toMatchObject({ sent: 1, unconfirmed: 0 });
  });
});
