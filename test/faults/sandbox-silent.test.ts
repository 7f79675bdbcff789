import { expect, it } from 'vitest';
import { createKeys, isFinalState } from '@sluice/core';
import { faultsSeed, reportFaults, seededRandom } from '../support/faults-report.js';
import { waitFor } from '../support/fleet.js';
import { useFleet } from '../support/use-fleet.js';

// The ESP stops answering mid-send, then answers again. SES (HTTP) reads every request in
// full and never answers: each attempt times out after its body went out, so it is ambiguous
// (flagged, resent or counted as sent per class, never a silent duplicate); SES is marked
// down after `failover.downAfter` and its route's standby (Mailgun) takes the traffic. The
// SMTP relay goes silent before DATA (no greeting, no answer to MAIL FROM): nothing of a
// message went out, so its retries are safe; it has no standby, so its mail waits.
const SCENARIO = 'sandbox-silent';
const seed = faultsSeed(SCENARIO);
const random = seededRandom(seed);
const CRITICAL = 15;
const NORMAL = 45;
const RELAYED = 30;
const START_AFTER_MS = 500 + Math.floor(random() * 700);
const SILENT_MS = 2_500 + Math.floor(random() * 1_000);
const TIMEOUT_MS = 800;

const fleet = useFleet({
  schedulers: 1,
  workers: 2,
  config: {
    providers: {
      ses: { kind: 'ses', sandbox: true, rate: 20, burst: 5, timeoutMs: TIMEOUT_MS },
      mg: { kind: 'mailgun', sandbox: true, domain: 'mg.acme.test', rate: 20, burst: 5, timeoutMs: TIMEOUT_MS },
      relay: { kind: 'smtp', sandbox: true, rate: 10, burst: 3, timeoutMs: TIMEOUT_MS },
    },
    routes: {
      transactional: [
        { provider: 'ses', weight: 1 },
        { provider: 'mg', weight: 0 },
      ],
      relayed: [{ provider: 'relay', weight: 1 }],
    },
    // Down longer than the silence lasts, so SES is not probed again while it is silent.
    failover: { downAfter: 3, downForMs: 4_000 },
    delivery: {
      retry: {
        ambiguous: { baseMs: 300, maxMs: 600 },
        transient_system: { baseMs: 300, maxMs: 600 },
      },
    },
    reserves: { critical: 0 },
  },
});

it('times out, flags what may have arrived, fails over or waits, and ends every message once it answers', async () => {
  const { client, sandbox, redis, prefix } = fleet();
  const keys = createKeys(prefix);
  const base = { from: 'app@acme.test', subject: 'hi', text: 'hello' };
  const ids = await client.sendBulk([
    ...Array.from({ length: CRITICAL }, (_, i) => ({
      ...base,
      to: `otp${i}@fine.test`,
      priority: 'critical' as const,
    })),
    ...Array.from({ length: NORMAL }, (_, i) => ({ ...base, to: `n${i}@fine.test`, priority: 'normal' as const })),
    ...Array.from({ length: RELAYED }, (_, i) => ({ ...base, to: `r${i}@fine.test`, stream: 'relayed' })),
  ]);

  const first = await waitFor(() => sandbox.accepted()[0]?.arrivedAt, 20_000, 'the first arrival');
  await new Promise((r) => setTimeout(r, first + START_AFTER_MS - Date.now()));
  sandbox.setScenario({ silence: { http: ['ses'], smtp: 'before-data' } });
  const silentFrom = Date.now();
  // Watch the providers' standing while it is silent.
  const markedDown = new Set<string>();
  while (Date.now() < silentFrom + SILENT_MS) {
    for (const p of ['ses', 'relay']) if (await redis.hget(keys.adjustments(), `down:${p}`)) markedDown.add(p);
    await new Promise((r) => setTimeout(r, 50));
  }
  sandbox.setScenario({});
  const silentUntil = Date.now();

  const read = () => Promise.all(ids.map((m) => client.messages.status(m.id)));
  const finals = await waitFor(
    async () => {
      const records = await read();
      return records.every((r) => r && isFinalState(r.state)) ? records : null;
    },
    60_000,
    'every message final',
  ).catch(() => undefined);
  const records = finals ?? (await read());
  const stuck = records.filter((r) => !r || !isFinalState(r.state));

  const accepted = sandbox.accepted();
  const arrivals = new Map<string, number>();
  for (const a of accepted) arrivals.set(a.sluiceId!, (arrivals.get(a.sluiceId!) ?? 0) + 1);
  const twice = records.filter((r) => r && (arrivals.get(r.id) ?? 0) > 1);
  const flagged = twice.filter((r) => r!.ambiguous > 0);
  const lost = records.filter((r) => r && isFinalState(r.state) && (r.state !== 'sent' || !arrivals.has(r.id)));
  const afterSilence = accepted.filter(
    (a) => a.arrivedAt >= silentUntil && (a.protocol === 'ses' || a.protocol === 'smtp'),
  );
  const recoverySeconds = afterSilence.length
    ? Math.round((Math.min(...afterSilence.map((a) => a.arrivedAt)) - silentUntil) / 10) / 100
    : -1;
  const transactional = records.slice(0, CRITICAL + NORMAL);
  const relayed = records.slice(CRITICAL + NORMAL);
  const ambiguous = transactional.filter((r) => r && r.ambiguous > 0);
  const figures = {
    lost: lost.length,
    duplicatesFlagged: flagged.length,
    duplicatesUnflagged: twice.length - flagged.length,
    stuck: stuck.length,
    recoverySeconds,
    silentSeconds: Math.round((silentUntil - silentFrom) / 100) / 10,
    ambiguousAttempts: records.reduce((n, r) => n + (r?.ambiguous ?? 0), 0),
    ambiguousMessages: ambiguous.length,
    sentByStandby: transactional.filter((r) => r?.provider === 'mg').length,
    relayRetried: relayed.filter((r) => (r?.attempts ?? 0) > 1).length,
    markedDown: [...markedDown].sort().join('+') || 'none',
  };
  reportFaults(SCENARIO, figures);
  const rejected = records.filter((r) => r?.state === 'rejected');
  if (rejected.length) console.log(`sandbox-silent: rejected ${JSON.stringify(rejected.slice(0, 3))}`);

  // Every message in one final state, at the sandbox, none twice without its ambiguity flagged.
  expect({ stuck: stuck.length, lost: lost.length, unflagged: figures.duplicatesUnflagged }).toEqual({
    stuck: 0,
    lost: 0,
    unflagged: 0,
  });
  // The provider's timeouts fired: SES requests that went out in full are ambiguous, and
  // SES was marked down, the relay too (failures in a row without an answer).
  expect(ambiguous.length).toBeGreaterThan(0);
  expect([...markedDown].sort()).toEqual(['relay', 'ses']);
  // None of it ends as a refusal (whatever the final state of an always-ambiguous message is
  // named, it is not `rejected`; here the standby takes the resends).
  expect(rejected).toEqual([]);
  // The route with a standby moved to it; the one without waited, and its retries were safe.
  expect(figures.sentByStandby).toBeGreaterThan(0);
  expect(relayed.every((r) => r!.provider === 'relay' && r!.ambiguous === 0)).toBe(true);
  expect(figures.relayRetried).toBeGreaterThan(0);
  expect(
    accepted.filter((a) => a.protocol === 'smtp' && a.arrivedAt > silentFrom + 100 && a.arrivedAt < silentUntil),
  ).toEqual([]);
  expect(recoverySeconds).toBeGreaterThanOrEqual(0);
});
