import { expect, it } from 'vitest';
import { waitFor } from './support/fleet.js';
import { useFleet } from './support/use-fleet.js';

// Must-show (c): every message reaches exactly one final state, and none is lost when a
// worker process is killed with SIGKILL mid-run.
const TOTAL = 600;

const fleet = useFleet({
  schedulers: 1,
  workers: 3,
  // Slow answers keep many sends in flight when the worker dies.
  scenario: { default: { latencyMs: 80 } },
  config: { providers: { ses: { kind: 'ses', sandbox: true, rate: 150, burst: 20, concurrency: 30 } } },
});

it('ends every message in exactly one final state when a worker is SIGKILLed mid-send', async () => {
  await fleet().client.campaigns.create({ id: 'crash', priority: 'normal' });
  const results = await fleet().client.sendBulk(
    Array.from({ length: TOTAL }, (_, i) => ({
      from: 'news@acme.test',
      to: `c${i}@crash.test`,
      subject: 'hi',
      text: 'hello',
      campaignId: 'crash',
    })),
  );
  const ids = results.map((r) => r.id);
  await waitFor(() => fleet().sandbox.accepted().length >= 150, 20_000, 'sending under way');

  const victim = fleet().processes.find((p) => p.name.startsWith('worker'))!;
  expect(await victim.stop('SIGKILL')).toBeNull();

  // The killed worker's jobs stall and another worker takes them over.
  const status = await waitFor(
    async () => {
      const s = await fleet().client.campaigns.status('crash');
      return s.pending === 0 ? s : null;
    },
    60_000,
    'every message final',
  );
  expect(status.counts).toMatchObject({ accepted: TOTAL, sent: TOTAL, rejected: 0, expired: 0 });

  const records = await Promise.all(ids.map((id) => fleet().client.messages.status(id)));
  expect(records.every((r) => r?.state === 'sent')).toBe(true);

  // Nothing lost: the ESP has every message but those the kill cut between the `submitted`
  // mark and the request's final bytes (the window the gate leaves, as the faults suite's
  // crash steps show): each of those is flagged ambiguous and, for this class, counted as
  // sent (delivery.onAmbiguous: assume-sent). An unflagged message missing is lost.
  const submissions = new Map<string, number>();
  for (const a of fleet().sandbox.accepted()) submissions.set(a.sluiceId!, (submissions.get(a.sluiceId!) ?? 0) + 1);
  const byId = new Map(ids.map((id, i) => [id, records[i]!]));
  const missing = ids.filter((id) => !submissions.has(id));
  expect(missing.filter((id) => byId.get(id)!.ambiguous === 0)).toEqual([]);
  expect([...submissions.keys()].filter((id) => !byId.has(id))).toEqual([]);

  // None sent twice: an attempt cut off after its request was out in full is ambiguous
  // and counted as sent; one cut off before that is resent. Either way the ESP saw each
  // message at most once.
  const twice = ids.filter((id) => submissions.get(id)! > 1);
  expect(twice).toEqual([]);
  const ambiguous = records.filter((r) => r!.ambiguous > 0);
  for (const r of ambiguous) expect(r!.lastOutcome).toBe('ambiguous');
  console.log(
    `crash: ${TOTAL} final, none twice; ${ambiguous.length} were in flight at the kill and counted as sent from their submission, ${missing.length} of them cut before their final bytes`,
  );
});
