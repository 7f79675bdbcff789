import { expect, it } from 'vitest';
import { waitFor } from './support/fleet.js';
import { useFleet } from './support/use-fleet.js';

// What the worker does with each kind of answer: permanent, throttled, expired; and a
// SIGTERM that lets in-flight sends finish.
const fleet = useFleet({
  schedulers: 1,
  workers: 2,
  scenario: {
    domains: {
      'bounce.test': { bounce: ['gone@bounce.test'] },
      // The receiver takes 5/s but Sluice was told nothing about it: it answers 429.
      'busy.test': { rate: 5, burst: 1 },
      'slow.test': { latencyMs: 700 },
    },
  },
  config: {
    providers: { ses: { kind: 'ses', sandbox: true, rate: 200, burst: 20, concurrency: 20 } },
    delivery: { retry: { throttled: { baseMs: 200, maxMs: 2_000 } } },
  },
});

const base = { from: 'app@acme.test', subject: 'hi', text: 'hello' };
const finalState = async (id: string) =>
  waitFor(
    async () => {
      const r = await fleet().client.messages.status(id);
      return r && ['sent', 'rejected', 'suppressed', 'expired', 'cancelled'].includes(r.state) ? r : null;
    },
    30_000,
    `final state of ${id}`,
  );

it('rejects a hard bounce once, suppresses the address, and never sends to it again', async () => {
  const first = await fleet().client.send({ ...base, to: 'gone@bounce.test' });
  expect(await finalState(first.id)).toMatchObject({ state: 'rejected', attempts: 1, lastOutcome: 'bad_recipient' });
  expect((await fleet().client.messages.status(first.id))!.lastReply).toMatch(/MessageRejected/);
  const again = await fleet().client.send({ ...base, to: 'Gone@bounce.test' });
  expect(await finalState(again.id)).toMatchObject({ state: 'suppressed', attempts: 0 });
  expect(fleet().sandbox.stats().byDomain['bounce.test']).toMatchObject({ accepted: 0, rejected: 1 });
});

it('retries 429s after the provider’s wait until each message is sent, once', async () => {
  const { length } = fleet().sandbox.accepted();
  const sent = await fleet().client.sendBulk(
    Array.from({ length: 15 }, (_, i) => ({ ...base, to: `u${i}@busy.test` })),
  );
  const records = await Promise.all(sent.map((s) => finalState(s.id)));
  expect(records.every((r) => r.state === 'sent')).toBe(true);
  expect(records.some((r) => r.attempts > 1)).toBe(true);
  expect(fleet().sandbox.stats().byDomain['busy.test']!.throttled).toBeGreaterThan(0);
  const ids = fleet()
    .sandbox.accepted()
    .slice(length)
    .map((a) => a.sluiceId);
  expect(ids.sort()).toEqual(sent.map((s) => s.id).sort());
});

it('never sends a message after its expiry', async () => {
  const { id } = await fleet().client.send({ ...base, to: 'late@example.test', expiresAt: Date.now() + 1 });
  expect(await finalState(id)).toMatchObject({ state: 'expired' });
  expect(
    fleet()
      .sandbox.accepted()
      .some((a) => a.sluiceId === id),
  ).toBe(false);
});

it('drains on SIGTERM: sends in flight finish, the rest wait for the next worker', async () => {
  const sent = await fleet().client.sendBulk(
    Array.from({ length: 20 }, (_, i) => ({ ...base, to: `s${i}@slow.test` })),
  );
  await waitFor(
    async () => {
      const r = await Promise.all(sent.map((s) => fleet().client.messages.status(s.id)));
      return r.filter((x) => x?.state === 'submitted').length >= 4;
    },
    10_000,
    'sends in flight',
  );
  const workers = fleet().processes.filter((p) => p.name.startsWith('worker'));
  expect(await Promise.all(workers.map((w) => w.stop('SIGTERM')))).toEqual([0, 0]);
  // Whatever was in flight finished as sent; nothing was left half-way.
  const mid = await Promise.all(sent.map((s) => fleet().client.messages.status(s.id)));
  expect(mid.filter((r) => r!.state === 'sending' || r!.state === 'submitted')).toEqual([]);
  await fleet().startWorker();
  const records = await Promise.all(sent.map((s) => finalState(s.id)));
  expect(records.every((r) => r.state === 'sent' && r.ambiguous === 0)).toBe(true);
  const ids = fleet()
    .sandbox.accepted()
    .filter((a) => a.domain === 'slow.test')
    .map((a) => a.sluiceId);
  expect(ids.length).toBe(20);
  expect(new Set(ids).size).toBe(20);
});
