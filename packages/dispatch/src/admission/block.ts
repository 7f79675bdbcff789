import { RateLimitError, type Job, type Queue } from 'bullmq';
import { jobIdOf, systemClock, type CampaignBlockData, type Clock, type IntakeJobData } from '@sluice/core';
import type { Store } from '@sluice/store';
import type { Admission, AdmissionResult, HeldNote } from './types.js';

// A campaign job of many recipients (docs/design/batches.md, "Campaign jobs by block"): each
// recipient admitted on its own, side by side, so the batcher fills its dispatch batches at once.
// What the block's job then becomes: done when every recipient is admitted or ended; a
// recipient that waits its turn in a receiver's line leaves as a campaign job of its own,
// delayed until its turn; those a held campaign queue stops stay in the block, which waits
// with the queue, and the next run admits only them.

/** What the block's admission needs of the scheduler. */
export interface BlockDeps {
  admission: Pick<Admission, 'admit'>;
  store: Pick<Store, 'noteHeld'>;
  clock?: Clock;
}

/** A recipient's admission: how it ended, or the error it met. */
type Admitted = { m: IntakeJobData; result: AdmissionResult } | { m: IntakeJobData; error: unknown };

/** A recipient that waits its turn goes alone: its own job, delayed until then, with its note. */
async function waitAlone(
  deps: BlockDeps,
  queue: Queue,
  m: IntakeJobData,
  wait: Extract<AdmissionResult, { kind: 'wait' }>,
): Promise<void> {
  const data = wait.ticket ? { ...m, ticket: wait.ticket } : m;
  const delay = Math.max(0, wait.at - (deps.clock ?? systemClock)());
  await Promise.all([deps.store.noteHeld(m.id, wait.note), queue.add('send', data, { jobId: jobIdOf(m), delay })]);
}

/**
 * Admits a block job's recipients. Returns when each is admitted, ended or waiting alone;
 * throws BullMQ's `RateLimitError` (the job back to its queue, held) with those a held campaign
 * queue stopped, or the first error met, the job's data cut to the recipients still to admit.
 */
export async function admitBlock(deps: BlockDeps, job: Job<CampaignBlockData>, queue: Queue): Promise<void> {
  const ctx = { campaignQueue: queue.name };
  const each: Admitted[] = await Promise.all(
    job.data.block.map((m) =>
      deps.admission.admit(m, ctx).then(
        (result) => ({ m, result }),
        (error: unknown) => ({ m, error }),
      ),
    ),
  );
  const rest: IntakeJobData[] = [];
  let hold: { ms: number; note: HeldNote; id: string } | undefined;
  let failure: { error: unknown } | undefined;
  for (const a of each) {
    if ('error' in a) {
      rest.push(a.m);
      failure ??= { error: a.error };
      continue;
    }
    const { result } = a;
    if (result.kind === 'wait') await waitAlone(deps, queue, a.m, result);
    else if (result.kind === 'hold' || result.kind === 'held') {
      rest.push(a.m);
      if (result.kind === 'hold' && (hold === undefined || result.ms > hold.ms))
        hold = { ms: result.ms, note: result.note, id: a.m.id };
    }
  }
  if (rest.length === 0) return;
  // Only the recipients still to admit run again: the others are admitted, ended or alone.
  if (rest.length < job.data.block.length) await job.updateData({ block: rest });
  if (failure !== undefined) throw failure.error;
  // Holds the whole campaign queue (every scheduler), noting why on the recipient that found it held.
  if (hold !== undefined) await Promise.all([deps.store.noteHeld(hold.id, hold.note), queue.rateLimit(hold.ms)]);
  throw new RateLimitError();
}
