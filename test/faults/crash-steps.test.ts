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

// Issue 12, defect 0: a worker SIGKILLed at each step of a send, deterministically (the
// crash worker kills itself from the delivery's step hook, once per message, at the step
// the plan names), then another worker takes the message over. Every message must end in
// exactly one final state, none lost, none at the ESP twice unless its record is flagged
// ambiguous, and the ambiguous ones exactly those killed after the `submitted` mark and
// before the record was final.

const STEPS: readonly DeliveryStep[] = ['taken', 'sending', 'withheld', 'placed', 'marked', 'answered', 'settled'];
/** Killed after the mark is in Redis and before the record is final: known to be ambiguous. */
const AFTER_MARK = new Set<DeliveryStep>(['marked', 'answered']);
const STREAMS = ['http', 'smtp'] as const;
const CLASSES = ['normal', 'critical'] as const;
/** Messages per step, stream and class. */
const PER_CELL = 1;
/** Crash workers alive at once (each dies at its first planned message). */
const WORKERS = 3;

const fleet = useFleet({
  schedulers: 1,
  workers: 0,
  config: {
    defaultProvider: 'ses',
    providers: {
      // Slots to spare: a killed worker's lease (3 s) must not keep its successor waiting.
      ses: { kind: 'ses', sandbox: true, rate: 200, burst: 50, concurrency: 64 },
      smtp: { kind: 'smtp', sandbox: true, rate: 200, burst: 50, concurrency: 64 },
    },
    routes: { http: [{ provider: 'ses' }], smtp: [{ provider: 'smtp' }] },
    // One job at a time per class and process: the kill cuts off only the planned message.
    // A killed worker's messages are taken back within a few seconds.
    worker: {
      concurrency: { critical: 1, high: 1, normal: 1, low: 1 },
      lateAfterMs: 60_000,
      lockDurationMs: 3_000,
      stalledIntervalMs: 500,
    },
  },
});

interface Planned {
  id: string;
  step: DeliveryStep;
  stream: (typeof STREAMS)[number];
  priority: (typeof CLASSES)[number];
}

it('kills a worker at every step of a send: one final state each, no silent duplicate', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-crash-steps-'));
  const marks = join(dir, 'marks');
  const planFile = join(dir, 'plan.json');
  const { client, sandbox } = fleet();
  const planned: Planned[] = [];
  const plan: Record<string, DeliveryStep> = {};
  let exits = 0;

  // One class at a time: a crash worker then holds one job when it dies, the planned one.
  for (const priority of CLASSES) {
    const began = Date.now();
    const cells = STEPS.flatMap((step) =>
      STREAMS.flatMap((stream) => Array.from({ length: PER_CELL }, () => ({ step, stream }))),
    );
    const results = await client.sendBulk(
      cells.map(({ step, stream }, i) => ({
        from: 'ops@acme.test',
        to: `${priority}-${step}-${stream}-${i}@crash.test`,
        subject: `killed at ${step}`,
        text: 'hello',
        priority,
        stream,
      })),
    );
    const phase = results.map((r, i) => ({ id: r.id, ...cells[i]!, priority }));
    for (const p of phase) plan[p.id] = p.step;
    planned.push(...phase);
    mkdirSync(marks, { recursive: true });
    writeFileSync(planFile, JSON.stringify(plan));

    const workers = crashWorkers(fleet, { SLUICE_CRASH_PLAN: planFile, SLUICE_CRASH_MARKS: marks });
    const killed = (): number => readdirSync(marks).filter((id) => phase.some((p) => p.id === id)).length;
    await waitFor(
      async () => {
        // Workers die one planned message each; new ones take over until every planned
        // kill has happened, then finish the rest (their plan has nothing left to kill).
        workers.keep(killed() < phase.length ? WORKERS : 1);
        const states = await Promise.all(phase.map((p) => client.messages.status(p.id)));
        return states.every((s) => s !== null && isFinalState(s.state)) && killed() === phase.length;
      },
      240_000,
      `every ${priority} message killed once at its step and final`,
    ).catch(async (error: unknown) => {
      // Gave up: say how many were left, then fail (the workers are stopped with the fleet).
      const states = await Promise.all(phase.map((p) => client.messages.status(p.id)));
      const stuck = states.filter((st) => st === null || !isFinalState(st.state)).length;
      reportFaults('crash-steps', { kills: readdirSync(marks).length, stuck });
      throw error;
    });
    // Nothing of this class may still be in flight, nor a worker with this plan, when the
    // next class's kills begin.
    await workers.stop();
    exits += workers.exits;
    console.log(
      `crash-steps: ${phase.length} ${priority} messages killed and recovered in ${((Date.now() - began) / 1000).toFixed(1)} s`,
    );
  }

  const records = new Map(
    await Promise.all(planned.map(async (p) => [p.id, await client.messages.status(p.id)] as const)),
  );
  const arrivals = new Map<string, number>();
  for (const a of sandbox.accepted()) arrivals.set(a.sluiceId!, (arrivals.get(a.sluiceId!) ?? 0) + 1);
  const kills = readdirSync(marks).length;
  rmSync(dir, { recursive: true, force: true });

  const row = (p: Planned) => {
    const r = records.get(p.id)!;
    return {
      step: p.step,
      stream: p.stream,
      priority: p.priority,
      state: r.state,
      ambiguous: r.ambiguous > 0,
      arrivals: arrivals.get(p.id) ?? 0,
    };
  };
  const rows = planned.map(row);
  const flagged = rows.filter((r) => r.ambiguous);
  const figures = {
    kills,
    lost: rows.filter((r) => r.state !== 'sent' || (!r.ambiguous && r.arrivals === 0)).length,
    duplicatesFlagged: flagged.filter((r) => r.arrivals > 1).length,
    duplicatesUnflagged: rows.filter((r) => !r.ambiguous && r.arrivals > 1).length,
    stuck: 0,
    // The window the gate leaves: the mark written, the final bytes never out. Flagged, and
    // (assume-sent) counted as sent although the ESP never had it whole.
    ambiguousNeverArrived: flagged.filter((r) => r.arrivals === 0).length,
    processExits: exits,
  };
  reportFaults('crash-steps', figures);

  expect(kills).toBe(planned.length);
  // Exactly one final state each (finalize refuses a second), and it is `sent`.
  expect(rows.filter((r) => r.state !== 'sent')).toEqual([]);
  expect(figures.duplicatesUnflagged).toBe(0);
  // Ambiguous exactly when killed after the mark and before the record was final.
  expect(rows.filter((r) => r.ambiguous !== AFTER_MARK.has(r.step))).toEqual([]);
  // What each step leaves at the ESP: before the mark, the ESP never had a whole request and
  // the retry sends it once; at the mark (final bytes withheld) it has none, so a resend
  // (critical) arrives once and assume-sent (normal) not at all; after the answer it has it,
  // and only a resend (critical) adds a second copy, flagged.
  const expected = (r: (typeof rows)[number]): number => {
    if (r.step === 'marked') return r.priority === 'critical' ? 1 : 0;
    if (r.step === 'answered') return r.priority === 'critical' ? 2 : 1;
    return 1;
  };
  expect(rows.filter((r) => r.arrivals !== expected(r))).toEqual([]);
}, 360_000);
