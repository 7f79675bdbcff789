import type { DispatchJobData } from '@sluice/core';
import { describe, expect, it } from 'vitest';
import { createOutcomes } from '@sluice/store';
import { overrideField, type SignalKey } from '@sluice/throttle';
import { useRedisPrefix } from '../../../test/support/redis-prefix.js';
import { jobOf, sentTo, useDelivery, type Setup } from './delivery-setup.js';

// The worker's outcome table, in process: the delivery engine with real collaborators on
// real Redis, sending through the real SMTP adapter to the sandbox (whose scenario picks
// the reply: accept, 550 5.1.1, 421 4.7.28, 451 4.3.0). Ambiguous attempts (a connection
// lost after DATA, a worker dead after submitting): delivery-ambiguous.test.ts.

const r = useRedisPrefix();
const { setup, admitted } = useDelivery(r);

describe('the delivery engine’s outcome table', () => {
  it('accepted → sent, with no attempt log entry on a first attempt', async () => {
    const s = await setup();
    const m = await admitted(s, 'ok@accept.test');
    expect(await s.delivery.deliver(jobOf(m), s.gate)).toBe('done');
    const record = await s.store.get(m.id);
    expect(record).toMatchObject({
      state: 'sent',
      attempts: 1,
      lastOutcome: 'accepted',
      provider: 'relay',
      receiver: 'accept.test',
    });
    expect(record?.providerMessageId).toBeTruthy();
    expect(await s.store.attempts(m.id)).toEqual([]);
    expect(sentTo(s, 'ok@accept.test')).toBe(1);
    expect(s.gate.inUse).toBe(0);
  });

  it('rejected bad_recipient → rejected, logged, and the address suppressed for its tenant', async () => {
    const s = await setup({ default: { bounce: ['gone@*'] } });
    const m = await admitted(s, 'gone@bounce.test');
    await s.delivery.deliver(jobOf(m), s.gate);
    expect(await s.store.get(m.id)).toMatchObject({ state: 'rejected', lastOutcome: 'bad_recipient' });
    expect(await s.store.suppressed('acme', 'gone@bounce.test')).not.toBeNull();
    const log = await s.store.attempts(m.id);
    expect(log).toMatchObject([
      {
        outcome: 'rejected',
        family: 'bad_recipient',
        rule: 'smtp.bad-mailbox-code',
        action: 'final: rejected, recipient suppressed',
      },
    ]);
    expect(log[0]!.reply).toMatch(/^550 5\.1\.1/);
  });

  it('throttled → retrying after a delay, back in its campaign queue, and the receiver slowed down', async () => {
    const s = await setup({ domains: { 'slow.test': { rate: 0.001, burst: 1 } } });
    await s.delivery.deliver(jobOf(await admitted(s, 'a@slow.test')), s.gate);
    const m = await admitted(s, 'b@slow.test');
    await s.delivery.deliver(jobOf(m), s.gate);
    const record = await s.store.get(m.id);
    expect(record).toMatchObject({ state: 'retrying', lastOutcome: 'throttled', attempts: 1 });
    expect(record?.lastReply).toMatch(/^421.4\.7\.28/);
    const [entry] = await s.store.attempts(m.id);
    expect(entry).toMatchObject({
      outcome: 'throttled',
      family: 'throttled',
      action: expect.stringMatching(/^retry in \d+ ms$/),
    });
    const delayMs = Number(/retry in (\d+) ms/.exec(entry!.action!)![1]);
    expect(delayMs).toBeGreaterThan(0);
    // One delayed job in the campaign's queue: the next trip through admission, with its retry counts.
    const [job, ...more] = await s.queues.campaign('spring').getDelayed();
    expect(more).toEqual([]);
    expect(job).toMatchObject({
      id: `${m.id}-1`,
      delay: delayMs,
      data: { id: m.id, hop: 1, retry: { failures: 0, byFamily: { throttled: 1 } } },
    });
    expect(job!.data).not.toHaveProperty('provider');
    expect(await s.queues.intake('normal').count()).toBe(0);
    expect(s.adjustments.factor(r.keys.bucket('receiver', 'slow.test'))).toBeLessThan(1);
    expect(s.adjustments.factor(r.keys.bucket('provider', 'relay'))).toBe(1);
  });

  it('a transactional retry goes back to its class’s intake queue', async () => {
    const s = await setup({ default: { fail: ['*@flaky.test'] } });
    const m = await admitted(s, 'x@flaky.test', { campaignId: undefined, priority: 'high' });
    await s.delivery.deliver(jobOf(m), s.gate);
    expect(await s.store.get(m.id)).toMatchObject({ state: 'retrying', lastOutcome: 'transient_system' });
    expect((await s.queues.intake('high').getDelayed()).map((j) => j.id)).toEqual([`${m.id}-1`]);
  });

  it('a first deferral goes on the outcome stream once; the final state after it too', async () => {
    const s = await setup({ default: { fail: ['*@flaky.test'] } });
    const outcomes = createOutcomes({ redis: r.redis, keys: r.keys });
    await outcomes.subscribe('backend');
    const m = await admitted(s, 'x@flaky.test', { campaignId: undefined });
    await s.delivery.deliver(jobOf(m), s.gate);
    // Its second trip, as admission gives it back (the retry counts on the job), fails again.
    const [job] = await s.queues.intake('normal').getDelayed();
    const { retry } = job!.data as DispatchJobData;
    await s.store.markDispatched(m.id);
    await s.delivery.deliver(jobOf({ ...m, retry }), s.gate);
    await s.store.markDispatched(m.id);
    await s.delivery.deliver(jobOf({ ...m, retry, expiresAt: s.now + 1 }), s.gate);
    const events = await outcomes.read('backend', 'one');
    expect(events.map((e) => [e.messageId, e.state, e.family])).toEqual([
      [m.id, 'deferred', 'transient_system'],
      [m.id, 'expired', 'transient_system: lifetime over before the next attempt'],
    ]);
    expect(events[0]).toMatchObject({ tenantId: 'acme', campaignId: undefined });
  });

  it('deferred with its lifetime over before the next attempt → expired', async () => {
    const s = await setup({ default: { fail: ['*@flaky.test'] } });
    // transient_system's first backoff is at least 500 ms: longer than the message has.
    const m = await admitted(s, 'x@flaky.test', { expiresAt: Date.now() + 400 });
    await s.delivery.deliver(jobOf(m), s.gate);
    expect(await s.store.get(m.id)).toMatchObject({
      state: 'expired',
      lastOutcome: 'transient_system: lifetime over before the next attempt',
    });
    expect(await s.store.attempts(m.id)).toMatchObject([
      { outcome: 'deferred', family: 'transient_system', action: 'final: expired' },
    ]);
    expect(await s.queues.campaign('spring').count()).toBe(0);
  });

  it('expired before sending: no send at all', async () => {
    const s = await setup();
    const m = await admitted(s, 'ok@accept.test', { expiresAt: s.now + 1_000 });
    s.now += 1_000;
    await s.delivery.deliver(jobOf(m), s.gate);
    expect(await s.store.get(m.id)).toMatchObject({ state: 'expired', lastReply: 'expired before sending' });
    expect(sentTo(s, 'ok@accept.test')).toBe(0);
  });

  it('a final record is never sent again', async () => {
    const s = await setup();
    const m = await admitted(s, 'ok@accept.test');
    await s.delivery.deliver(jobOf(m), s.gate);
    // The same job again (a crash before BullMQ completed it): nothing is sent twice.
    expect(await s.delivery.deliver(jobOf(m), s.gate)).toBe('done');
    expect(sentTo(s, 'ok@accept.test')).toBe(1);
    expect(await s.store.get(m.id)).toMatchObject({ state: 'sent', attempts: 1 });
  });

  it('a campaign paused since admission → back to its campaign queue, no attempt spent', async () => {
    const s = await setup();
    const m = await admitted(s, 'ok@accept.test');
    await s.store.setCampaignPaused('spring', true);
    await s.delivery.deliver(jobOf(m), s.gate);
    expect(await s.store.get(m.id)).toMatchObject({
      state: 'queued',
      attempts: 0,
      lastOutcome: 'held: campaign paused',
    });
    expect((await s.queues.campaign('spring').getWaiting()).map((j) => j.id)).toEqual([`${m.id}-1`]);
    expect(sentTo(s, 'ok@accept.test')).toBe(0);
  });

  it('a suspend override since admission → readmitted without an attempt', async () => {
    const s = await setup();
    const m = await admitted(s, 'ok@accept.test');
    const at = Date.now();
    const override = {
      scope: 'tenant',
      name: 'acme',
      kind: 'suspend',
      untilMs: at + 60_000,
      actor: 'ops',
      reason: 'incident',
      setAt: at,
    };
    await r.redis.hset(r.keys.adjustments(), overrideField(r.keys.bucket('tenant', 'acme')), JSON.stringify(override));
    await s.adjustments.refresh();
    await s.delivery.deliver(jobOf(m), s.gate);
    expect(await s.store.get(m.id)).toMatchObject({
      state: 'queued',
      attempts: 0,
      lastOutcome: 'suspended: tenant acme',
    });
    expect((await s.queues.campaign('spring').getWaiting()).map((j) => j.id)).toEqual([`${m.id}-1`]);
    expect(await s.store.attempts(m.id)).toEqual([]);
    expect(sentTo(s, 'ok@accept.test')).toBe(0);
  });

  it('a late message is sent while its arrival fits rate + burst; past that it asks admission again', async () => {
    const s = await setup(
      {},
      {
        providers: { relay: { kind: 'smtp', sandbox: true, rate: 1, burst: 1, concurrency: 4 } },
        horizonsMs: { critical: 1_000, high: 1_000, normal: 5_000, low: 0 },
      },
    );
    // Admitted long ago (no worker was free): their missed slots left room, and 1/s + 1 lets
    // two arrive in a second.
    for (const to of ['a@accept.test', 'b@accept.test']) {
      const late = await admitted(s, to, { admittedAt: s.now - 10_000 });
      expect(await s.delivery.deliver(jobOf(late), s.gate)).toBe('done');
      expect(await s.store.get(late.id)).toMatchObject({ state: 'sent' });
    }
    // The third's room is a second away, past lateAfterMs: admission books it a slot (none
    // is booked yet, so now) and it waits in its dispatch queue until its room.
    const m = await admitted(s, 'c@accept.test', { admittedAt: s.now - 10_000 });
    const delayed: { data: DispatchJobData; untilMs: number }[] = [];
    expect(await s.delivery.deliver(jobOf(m, delayed), s.gate)).toBe('delayed');
    expect(delayed).toHaveLength(1);
    expect(delayed[0]!.untilMs - s.now).toBeGreaterThan(500);
    expect(delayed[0]!.data).toMatchObject({ id: m.id, admittedAt: delayed[0]!.untilMs, decidedAt: s.now });
    expect(await s.store.get(m.id)).toMatchObject({ state: 'dispatched', attempts: 0 });
    expect(sentTo(s, 'c@accept.test')).toBe(0);
    // With no slot within its class's horizon (that one took the provider's): back to
    // admission, no attempt spent.
    const low = await admitted(s, 'd@accept.test', { admittedAt: s.now - 10_000, priority: 'low' });
    expect(await s.delivery.deliver(jobOf(low, delayed), s.gate)).toBe('done');
    expect(await s.store.get(low.id)).toMatchObject({ state: 'queued', attempts: 0 });
    expect((await s.store.get(low.id))?.lastOutcome).toMatch(/^no room at the provider for \d+ ms: admitted again$/);
    expect((await s.queues.campaign('spring').getWaiting()).map((j) => j.id)).toEqual([`${low.id}-1`]);
    expect(delayed).toHaveLength(1);
    expect(sentTo(s, 'a@accept.test') + sentTo(s, 'b@accept.test')).toBe(2);
    expect(s.gate.inUse).toBe(0);
  });

  it('a send stalled past its place at the arrival gate asks again before its final bytes; with no room it is put off, nothing counted', async () => {
    // 1/s + 1: two arrivals in a second. The stall (0.2 s on the engine's clock, between the
    // gate's count and the final bytes) is longer than half the jitter slack.
    const stallOnce = (s: Setup): void => {
      let stalled = false;
      s.onStep = (step) => {
        if (step === 'placed' && !stalled) [stalled, s.now] = [true, s.now + 200];
      };
    };
    const s = await setup(
      {},
      { providers: { relay: { kind: 'smtp', sandbox: true, rate: 1, burst: 1, concurrency: 4 } } },
    );
    const a = await admitted(s, 'a@accept.test');
    expect(await s.delivery.deliver(jobOf(a), s.gate)).toBe('done');
    stallOnce(s);
    const b = await admitted(s, 'b@accept.test');
    const delayed: { data: DispatchJobData; untilMs: number }[] = [];
    // Its place was the second's last: asked again, the next is a second away, so admission
    // books it again and it waits in its dispatch queue.
    expect(await s.delivery.deliver(jobOf(b, delayed), s.gate)).toBe('delayed');
    expect(delayed).toHaveLength(1);
    expect(delayed[0]!.untilMs - s.now).toBeGreaterThan(500);
    expect(await s.store.get(b.id)).toMatchObject({ state: 'dispatched', attempts: 0 });
    expect(sentTo(s, 'b@accept.test')).toBe(0);
    expect(s.gate.inUse).toBe(0);

    // Where the gate has room, the late send takes a new place and goes, once.
    const roomy = await setup(
      {},
      { providers: { relay: { kind: 'smtp', sandbox: true, rate: 100, burst: 10, concurrency: 4 } } },
    );
    stallOnce(roomy);
    const c = await admitted(roomy, 'c@accept.test');
    expect(await roomy.delivery.deliver(jobOf(c), roomy.gate)).toBe('done');
    expect(await roomy.store.get(c.id)).toMatchObject({ state: 'sent', attempts: 1 });
    expect(sentTo(roomy, 'c@accept.test')).toBe(1);
  });
});

describe('what the engine counts for /metrics', () => {
  it('each answered attempt once, by provider, pool, receiver (other for a domain of its own) and outcome; the latency of what was sent', async () => {
    const s = await setup(
      { default: { bounce: ['gone@*'] } },
      { receivers: [{ name: 'google', domains: ['gmail.test'], rate: 10 }] },
    );
    s.now = Date.now();
    const ok = await admitted(s, 'ok@accept.test', { acceptedAt: s.now - 1_500 });
    await s.delivery.deliver(jobOf(ok), s.gate);
    await s.delivery.deliver(jobOf(await admitted(s, 'gone@gmail.test', { receiver: 'google' })), s.gate);
    expect(s.counted.attempts.map((a) => a.labels)).toEqual([
      { provider: 'relay', pool: 'default', receiver: 'other', outcome: 'accepted' },
      { provider: 'relay', pool: 'default', receiver: 'google', outcome: 'rejected' },
    ]);
    for (const a of s.counted.attempts) expect(a.seconds).toBeGreaterThan(0);
    expect(s.counted.delivered).toEqual([['normal', 1.5]]);
    // A message already final is not sent, so not counted.
    await s.delivery.deliver(jobOf(ok), s.gate);
    expect(s.counted.attempts).toHaveLength(2);
  });
});

describe('what the engine learns from an outcome', () => {
  it('counts an attempt under every key: provider, receiver, pool, stream, tenant, campaign and its circuit', async () => {
    const s = await setup({ domains: { 'slow.test': { rate: 0.001, burst: 1 } } });
    await s.delivery.deliver(jobOf(await admitted(s, 'a@slow.test')), s.gate);
    await s.delivery.deliver(jobOf(await admitted(s, 'b@slow.test')), s.gate);
    await s.signals.flush();
    const on: SignalKey[] = [
      { kind: 'provider', name: 'relay' },
      { kind: 'receiver', name: 'slow.test' },
      { kind: 'pool', name: 'default' },
      { kind: 'stream', name: 'transactional' },
      { kind: 'tenant', name: 'acme' },
      { kind: 'campaign', name: 'spring' },
      { kind: 'circuit', name: 'slow.test|default|transactional' },
    ];
    const counts = await Promise.all(
      on.map(async (k) => [`${k.kind}:${k.name}`, (await s.signals.read(k, 60_000)).counts] as const),
    );
    const receiverRefused = { attempted: 2, accepted: 1, throttled: 1, recipient_deferred: 1 };
    const carrierDeferred = { attempted: 2, accepted: 1, 'deferred:throttled': 1, recipient_deferred: 1 };
    // A receiver's 421 counts as a throttle against the receiver's keys, and as a
    // deferral for the provider and pool that carried it.
    expect(Object.fromEntries(counts)).toEqual({
      'provider:relay': carrierDeferred,
      'receiver:slow.test': receiverRefused,
      'pool:default': carrierDeferred,
      'stream:transactional': receiverRefused,
      'tenant:acme': receiverRefused,
      'campaign:spring': receiverRefused,
      'circuit:slow.test|default|transactional': receiverRefused,
    });
  });

  it('counts a rule’s match on the enhanced code the classifier found', async () => {
    const rules = [
      { id: 'policy-57', signal: 'matched', match: { codes: ['5.7'] }, atLeast: 1, scope: 'receiver', multiply: 0.5 },
    ];
    const s = await setup({ default: { block: ['spam@*'], bounce: ['gone@*'] } }, { governor: { rules } });
    await s.delivery.deliver(jobOf(await admitted(s, 'spam@block.test')), s.gate);
    await s.delivery.deliver(jobOf(await admitted(s, 'gone@block.test')), s.gate);
    await s.signals.flush();
    const receiver = await s.signals.read({ kind: 'receiver', name: 'block.test' }, 60_000);
    expect(receiver.count('rejected:policy_block')).toBe(1);
    expect(receiver.count('rejected:bad_recipient')).toBe(1);
    expect(receiver.count('matched:policy-57')).toBe(1);
  });

  it('a full mailbox sent as 5xx is rejected, not retried, and suppresses the address only at the count', async () => {
    const full = '552 5.2.2 The email account that you tried to reach is over quota and inactive. - gsmtp';
    const s = await setup(
      { default: { rate: 0.01, burst: 1, throttleReply: full } },
      { suppression: { mailboxFull: { count: 2 } } },
    );
    // The first message takes the only token: the rest meet the full mailbox.
    await s.delivery.deliver(jobOf(await admitted(s, 'warm@full.test')), s.gate);
    const first = await admitted(s, 'Box@full.test');
    await s.delivery.deliver(jobOf(first), s.gate);
    expect(await s.store.get(first.id)).toMatchObject({ state: 'rejected' });
    expect(await s.store.suppressed(first.tenantId, 'box@full.test')).toBeNull();
    // The same job again (a redelivered job): a final message is neither sent nor counted again.
    await s.delivery.deliver(jobOf(first), s.gate);
    expect(await s.store.suppressed(first.tenantId, 'box@full.test')).toBeNull();
    const second = await admitted(s, 'box@full.test');
    await s.delivery.deliver(jobOf(second), s.gate);
    expect(await s.store.get(second.id)).toMatchObject({ state: 'rejected' });
    expect(await s.store.suppressed(first.tenantId, 'box@full.test')).toMatch(/2 full-mailbox rejections/);
    const log = await s.store.attempts(second.id);
    expect(log.map((e) => e.action)).toEqual(['final: rejected, recipient suppressed (mailbox full 2 times)']);
  });

  it('keeps a reply the classifier cannot read, with its receiver, for `sluice replies unknown`', async () => {
    const odd = '554 5.9.9 Strange things are afoot at the Circle K';
    const s = await setup({ default: { rate: 1, burst: 1, throttleReply: odd } });
    await s.delivery.deliver(jobOf(await admitted(s, 'first@odd.test')), s.gate);
    await s.delivery.deliver(jobOf(await admitted(s, 'second@odd.test')), s.gate);
    const kept = await s.store.unknownReplies({ receiver: 'odd.test' });
    expect(kept).toMatchObject([
      { receiver: 'odd.test', provider: 'relay', reply: expect.stringContaining('Strange things') },
    ]);
    await s.signals.flush();
    const receiver = await s.signals.read({ kind: 'receiver', name: 'odd.test' }, 60_000);
    expect(receiver.count('deferred:unknown')).toBe(1);
  });

  it('marks a provider down after failover.downAfter attempts in a row with no answer', async () => {
    const s = await setup({ default: { dropBeforeData: ['*@void.test'] } }, { failover: { downAfter: 2 } });
    await s.delivery.deliver(jobOf(await admitted(s, 'a@void.test')), s.gate);
    expect(s.adjustments.standing('relay').state).toBe('ok');
    const m = await admitted(s, 'b@void.test');
    await s.delivery.deliver(jobOf(m), s.gate);
    expect(await s.store.get(m.id)).toMatchObject({ state: 'retrying', lastOutcome: 'transient_system' });
    await s.adjustments.refresh();
    expect(s.adjustments.standing('relay')).toMatchObject({ state: 'down' });
    // Down, with nothing else in its route: still tried (its backoff paces it), no re-routing.
  });
});
