import { describe, expect, it } from 'vitest';
import { createKeys, isFinalState } from '@sluice/core';
import { CLASSIFIER_VERSION } from '@sluice/providers';
import { createSignals } from '@sluice/throttle';
import { waitFor } from './support/fleet.js';
import { useFleet } from './support/use-fleet.js';
import { RELAY, STORM } from './support/scenarios.js';

// What Sluice does with each kind of receiver reply, over SMTP (nodemailer against the
// sandbox's smtp-server): the classifier's family decides suppression, retries and pace.
const fleet = useFleet({
  schedulers: 1,
  workers: 2,
  scenario: {
    domains: {
      ...STORM.domains,
      'grey.test': { greylist: true },
      'bounce.test': { bounce: ['gone@bounce.test'], block: ['blocked@bounce.test'] },
      'drop.test': { dropAfterData: ['*@drop.test'] },
    },
  },
  config: {
    ...RELAY,
    receivers: STORM.receivers,
    delivery: {
      retry: {
        greylisted: { baseMs: 500, maxMs: 1_000 },
        throttled: STORM.throttledRetry,
        ambiguous: { baseMs: 200, maxMs: 400 },
      },
    },
    backpressure: STORM.backpressure,
  },
});

const base = { from: 'app@acme.test', subject: 'hi', text: 'hello' };
const finalState = async (id: string, timeoutMs = 30_000) =>
  waitFor(
    async () => {
      const r = await fleet().client.messages.status(id);
      return r && isFinalState(r.state) ? r : null;
    },
    timeoutMs,
    `final state of ${id}`,
  );
const acceptedBy = (domain: string) =>
  fleet()
    .sandbox.accepted()
    .filter((a) => a.domain === domain);

describe('permanent replies', () => {
  it('550 5.1.1: attempted once, rejected, the recipient suppressed', async () => {
    const { id } = await fleet().client.send({ ...base, to: 'gone@bounce.test' });
    expect(await finalState(id)).toMatchObject({ state: 'rejected', attempts: 1, lastOutcome: 'bad_recipient' });
    const log = await fleet().client.messages.attempts(id);
    expect(log).toHaveLength(1);
    expect(log[0]).toMatchObject({
      outcome: 'rejected',
      family: 'bad_recipient',
      classifier: CLASSIFIER_VERSION,
      action: 'final: rejected, recipient suppressed',
    });
    expect(log[0]!.reply).toMatch(/^550.*5\.1\.1/);
    const again = await fleet().client.send({ ...base, to: 'gone@bounce.test' });
    expect(await finalState(again.id)).toMatchObject({ state: 'suppressed', attempts: 0 });
  });

  it('550 5.7.1 (a block): attempted once, rejected, the recipient NOT suppressed', async () => {
    const { id } = await fleet().client.send({ ...base, to: 'blocked@bounce.test' });
    expect(await finalState(id)).toMatchObject({ state: 'rejected', attempts: 1, lastOutcome: 'policy_block' });
    const log = await fleet().client.messages.attempts(id);
    expect(log).toHaveLength(1);
    expect(log[0]).toMatchObject({ family: 'policy_block', action: 'final: rejected' });
    expect(log[0]!.reply).toMatch(/^550.*5\.7\.1/);
    // A block is about the sender, not the address: the next message is tried again.
    const again = await fleet().client.send({ ...base, to: 'blocked@bounce.test' });
    expect(await finalState(again.id)).toMatchObject({ state: 'rejected', attempts: 1, lastOutcome: 'policy_block' });
  });
});

describe('temporary replies', () => {
  it('a greylisted message is accepted on its retry', async () => {
    const { id } = await fleet().client.send({ ...base, to: 'new@grey.test' });
    expect(await finalState(id)).toMatchObject({ state: 'sent', attempts: 2 });
    const log = await fleet().client.messages.attempts(id);
    expect(log.map((a) => [a.outcome, a.family])).toEqual([
      ['deferred', 'greylisted'],
      ['accepted', undefined],
    ]);
    expect(acceptedBy('grey.test').filter((a) => a.messageId?.includes(id))).toHaveLength(1);
  });
});

describe('connection lost after DATA', () => {
  it('is ambiguous: a newsletter is counted as sent, never sent a second time', async () => {
    const { id } = await fleet().client.send({ ...base, to: 'reader@drop.test', priority: 'low' });
    expect(await finalState(id)).toMatchObject({ state: 'sent', attempts: 1, ambiguous: 1, lastOutcome: 'ambiguous' });
    expect(await fleet().client.messages.attempts(id)).toMatchObject([
      { outcome: 'ambiguous', action: 'final: counted as sent (delivery.onAmbiguous: assume-sent)' },
    ]);
    expect(acceptedBy('drop.test').filter((a) => a.messageId?.includes(id))).toHaveLength(1);
  });

  it('is ambiguous: an OTP is resent with the same Message-ID, each resend counted and logged, and ends unconfirmed', async () => {
    const { id } = await fleet().client.send({ ...base, to: 'user@drop.test', priority: 'critical' });
    const record = await finalState(id);
    // The receiver drops every attempt: three resends (delivery.retry.ambiguous), then it
    // stops. Every copy arrived, so the message is not `rejected`: nobody knows (`unconfirmed`).
    expect(record).toMatchObject({ state: 'unconfirmed', attempts: 3, ambiguous: 3 });
    expect(record.lastOutcome).toMatch(/^attempts_exhausted/);
    const log = await fleet().client.messages.attempts(id);
    expect(log.map((a) => a.outcome)).toEqual(['ambiguous', 'ambiguous', 'ambiguous']);
    expect(log.map((a) => a.action)).toEqual([
      expect.stringMatching(/^retry in/),
      expect.stringMatching(/^retry in/),
      expect.stringMatching(/^final: unconfirmed/),
    ]);
    const arrived = acceptedBy('drop.test').filter((a) => a.messageId?.includes(id));
    expect(arrived).toHaveLength(3);
    expect(new Set(arrived.map((a) => a.messageId)).size).toBe(1);
  });
});

describe('a sustained 421 storm from one receiver', () => {
  it('keeps attempts per recipient ≤ 1.2 there, and the other receiver’s throughput as without it', async () => {
    const batch = (domain: string, n: number, tag: string) =>
      Array.from({ length: n }, (_, i) => ({ ...base, to: `${tag}${i}@${domain}` }));
    const span = (domain: string, tag: string) => {
      const t = acceptedBy(domain)
        .filter((a) => a.to[0]!.startsWith(tag))
        .map((a) => a.arrivedAt);
      return (Math.max(...t) - Math.min(...t)) / 1000;
    };
    // Baseline: the calm receiver alone.
    const alone = await fleet().client.sendBulk(batch('calm.test', 200, 'a'));
    await Promise.all(alone.map((s) => finalState(s.id)));
    const aloneSeconds = span('calm.test', 'a');

    const before = fleet().sandbox.stats().byDomain['storm.test'] ?? { accepted: 0, throttled: 0 };
    const mixed = [...batch('storm.test', 200, 's'), ...batch('calm.test', 200, 'b')].sort(() => Math.random() - 0.5);
    const sent = await fleet().client.sendBulk(mixed);
    const records = await Promise.all(sent.map((s) => finalState(s.id, 90_000)));
    expect(records.filter((r) => r.state !== 'sent')).toEqual([]);

    const storm = fleet().sandbox.stats().byDomain['storm.test']!;
    const attempts = storm.accepted - before.accepted + (storm.throttled - before.throttled);
    const perRecipient = attempts / 200;
    const withStormSeconds = span('calm.test', 'b');
    console.log(
      `421 storm: ${storm.throttled - before.throttled} refusals, ${perRecipient.toFixed(3)} attempts per storm recipient; ` +
        `calm receiver ${aloneSeconds.toFixed(2)} s alone, ${withStormSeconds.toFixed(2)} s during the storm`,
    );
    expect(storm.throttled - before.throttled).toBeGreaterThan(0); // the storm happened
    expect(perRecipient).toBeLessThanOrEqual(1.2);
    // Not starved by the storm (the tight figure, within 25% of alone, is `pnpm bench`'s
    // `isolation` row; measured 3–17% slower here).
    expect(withStormSeconds).toBeLessThanOrEqual(aloneSeconds * 2 + 1);
    // The workers counted it as signals, per key, for the governor to read.
    // Workers write them once a second.
    const signals = createSignals({ redis: fleet().redis, keys: createKeys(fleet().prefix) });
    const stormAttempts = records.filter((r) => r.to.endsWith('@storm.test')).reduce((n, r) => n + r.attempts, 0);
    const window = await waitFor(
      async () => {
        const w = await signals.read({ kind: 'receiver', name: 'storm' }, 300_000);
        return w.count('attempted') >= stormAttempts ? w : null;
      },
      5_000,
      'the storm’s signals',
    );
    await signals.close();
    expect(window.count('attempted')).toBe(stormAttempts);
    expect(window.count('accepted')).toBe(200);
    // Deferred recipients, each once: the storm recipients that needed more than one attempt.
    expect(window.count('recipient_deferred')).toBe(
      records.filter((r) => r.to.endsWith('@storm.test') && r.attempts > 1).length,
    );
    // Each refusal the receiver gave is one the signals counted (the pool never retries one).
    expect(window.count('throttled')).toBe(storm.throttled - before.throttled);
    // Every storm recipient got its message exactly once.
    const ids = acceptedBy('storm.test')
      .filter((a) => a.to[0]!.startsWith('s'))
      .map((a) => a.messageId);
    expect(ids).toHaveLength(200);
    expect(new Set(ids).size).toBe(200);
  }, 120_000);
});
