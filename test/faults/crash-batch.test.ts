import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { isFinalState } from '@sluice/core';
import type { DeliveryStep } from '@sluice/dispatch';
import { reportFaults } from '../support/faults-report.js';
import { crashWorkers } from '../support/crash-workers.js';
import { waitFor } from '../support/fleet.js';
import { useFleet } from '../support/use-fleet.js';

// Issue 33: a worker SIGKILLed at each step of a batch (docs/design/batches.md), as crash-steps
// does for a single send. One campaign a step; the crash worker dies at that step of its first
// recipient (position 0), taking the whole batch it was sending with it; another worker takes
// the batch job over (BullMQ's stall check). Every recipient must end `sent`, none lost, none at
// the ESP twice unless flagged ambiguous, and the flags where the step says.

const STEPS: readonly DeliveryStep[] = ['taken', 'withheld', 'placed', 'marked', 'answered', 'settled'];
/** Recipients a campaign: one batch (slots within one window of `batches.spreadMs`). */
const RECIPIENTS = 8;
const WORKERS = 2;

const fleet = useFleet({
  schedulers: 1,
  workers: 0,
  config: {
    providers: { ses: { kind: 'ses', sandbox: true, rate: 500, burst: 100, concurrency: 64 } },
    // A campaign's recipients fill one batch: admitted within 200 ms of its first, their slots
    // in one window (a window's edge between them would make two batches).
    batches: { fillMs: 200, spreadMs: 1_000 },
    // One job at a time per class and process: the kill cuts off only the batch in hand.
    worker: {
      concurrency: { critical: 1, high: 1, normal: 1, low: 1 },
      lateAfterMs: 60_000,
      lockDurationMs: 3_000,
      stalledIntervalMs: 500,
    },
  },
});

it('kills a worker at every step of a batch: every recipient one final state, no silent duplicate', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-crash-batch-'));
  const marks = join(dir, 'marks');
  const planFile = join(dir, 'plan.json');
  mkdirSync(marks, { recursive: true });
  const { client, sandbox } = fleet();
  const began = Date.now();

  const plan: Record<string, DeliveryStep> = {};
  for (const step of STEPS) {
    const id = `kill-${step}`;
    await client.campaigns.create({
      id,
      priority: 'normal',
      content: { from: 'Acme <news@acme.test>', subject: 'Hello {{n}}', text: 'Item {{n}}' },
    });
    await client.campaigns.launch(id, { total: RECIPIENTS, sample: { 'd0.test': 1 } });
    plan[`${id}_0`] = step;
  }
  writeFileSync(planFile, JSON.stringify(plan));
  const workers = crashWorkers(fleet, { SLUICE_CRASH_PLAN: planFile, SLUICE_CRASH_MARKS: marks });
  workers.keep(WORKERS);
  for (const step of STEPS) {
    const id = `kill-${step}`;
    async function* recipients() {
      for (let i = 0; i < RECIPIENTS; i++) yield { to: `u${i}@d${i % 2}.test`, data: { n: i } };
    }
    await client.campaigns.inject(id, recipients());
  }

  const ids = STEPS.flatMap((step) => Array.from({ length: RECIPIENTS }, (_, i) => `kill-${step}_${i}`));
  const killed = (): number => readdirSync(marks).length;
  await waitFor(
    async () => {
      workers.keep(WORKERS);
      const states = await Promise.all(ids.map((id) => client.messages.status(id)));
      return states.every((s) => s !== null && isFinalState(s.state)) && killed() === STEPS.length;
    },
    180_000,
    'every recipient final and every planned kill done',
  ).catch(async (error: unknown) => {
    const states = await Promise.all(ids.map((id) => client.messages.status(id)));
    reportFaults('crash-batch', {
      kills: killed(),
      stuck: states.filter((s) => s === null || !isFinalState(s.state)).length,
    });
    throw error;
  });
  await workers.stop();
  const kills = killed();
  rmSync(dir, { recursive: true, force: true });
  console.log(
    `crash-batch: ${ids.length} recipients, ${kills} kills, in ${((Date.now() - began) / 1000).toFixed(1)} s`,
  );

  const arrivals = new Map<string, number>();
  /** The batch (ESP call) each recipient arrived in. */
  const batchOf = new Map<string, string>();
  for (const a of sandbox.accepted()) {
    arrivals.set(a.sluiceId!, (arrivals.get(a.sluiceId!) ?? 0) + 1);
    if (a.tags.sluice_batch !== undefined) batchOf.set(a.sluiceId!, a.tags.sluice_batch);
  }
  const batched = new Set(batchOf.keys());
  const rows = await Promise.all(
    ids.map(async (id) => {
      const r = (await client.messages.status(id))!;
      return {
        id,
        step: id.slice(5, id.lastIndexOf('_')),
        state: r.state,
        ambiguous: r.ambiguous > 0,
        arrivals: arrivals.get(id) ?? 0,
      };
    }),
  );
  const flagged = rows.filter((r) => r.ambiguous);
  const figures = {
    kills,
    lost: rows.filter((r) => r.state !== 'sent' || (!r.ambiguous && r.arrivals === 0)).length,
    duplicatesFlagged: flagged.filter((r) => r.arrivals > 1).length,
    duplicatesUnflagged: rows.filter((r) => !r.ambiguous && r.arrivals > 1).length,
    flagged: flagged.length,
    ambiguousNeverArrived: flagged.filter((r) => r.arrivals === 0).length,
    batched: batched.size,
    processExits: workers.exits,
  };
  reportFaults('crash-batch', figures);

  expect(kills).toBe(STEPS.length);
  expect(rows.filter((r) => r.state !== 'sent')).toEqual([]);
  expect(figures.duplicatesUnflagged).toBe(0);
  expect(figures.lost).toBe(0);
  // Most recipients went in batches (the cell tests the batch path, not single sends).
  expect(batched.size).toBeGreaterThan(ids.length / 2);
  const at = (step: string, position = 0) => rows.find((r) => r.id === `kill-${step}_${position}`)!;
  // Killed before the mark: nothing was submitted, nobody flagged, each sent once by the next worker.
  for (const step of ['taken', 'withheld', 'placed'])
    expect(rows.filter((r) => r.step === step && (r.ambiguous || r.arrivals !== 1))).toEqual([]);
  // Should a campaign's eight make two batches after all, the kill takes position 0's, and the
  // other one goes as usual.
  // At the mark (the final bytes withheld): the ESP never had the request; every recipient of
  // the batch flagged, and normal mail assumed sent (delivery.onAmbiguous), so none arrives.
  expect(at('marked')).toMatchObject({ ambiguous: true, arrivals: 0 });
  expect(rows.filter((r) => r.step === 'marked' && !(r.ambiguous ? r.arrivals === 0 : r.arrivals === 1))).toEqual([]);
  // After the answer and before any recipient was settled: every recipient of that batch flagged,
  // each at the ESP once.
  const killedBatch = batchOf.get('kill-answered_0');
  expect(killedBatch).toBeDefined();
  expect(
    rows.filter(
      (r) => r.step === 'answered' && (r.arrivals !== 1 || r.ambiguous !== (batchOf.get(r.id) === killedBatch)),
    ),
  ).toEqual([]);
  // After its own settling: final, not flagged, at the ESP once.
  expect(at('settled')).toMatchObject({ ambiguous: false, arrivals: 1 });
  expect(batched.has('kill-settled_0')).toBe(true);
}, 300_000);
