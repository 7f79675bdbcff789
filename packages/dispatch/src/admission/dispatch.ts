import { jobIdOf, type DispatchJobData, type IntakeJobData, type ReceiverLimit } from '@sluice/core';
import type { AdmissionResult, Deps } from './types.js';

/**
 * The last step: an admitted message goes to its class's dispatch queue, with where it was
 * routed and its receiver's limit (so a worker asking the limiter again needs no DNS), and
 * its record becomes `dispatched`. A booked one waits in the dispatch queue until its slot,
 * so it never queues behind the intake backlog and never asks the limiter twice.
 */
export async function dispatch(
  deps: Pick<Deps, 'store' | 'queues'>,
  m: IntakeJobData,
  admitted: { provider: string; receiver: ReceiverLimit; failover: boolean; delay: number },
  now: number,
): Promise<AdmissionResult> {
  const { provider, receiver, failover, delay } = admitted;
  const { ticket: _used, ...message } = m;
  const data: DispatchJobData = {
    ...message,
    provider,
    receiver: receiver.name,
    receiverLimit: { rate: receiver.rate, burst: receiver.burst },
    admittedAt: now + delay,
    decidedAt: now,
    ...(failover ? { failover: true } : {}),
  };
  // Job first, then record: a crash in between leaves the intake job to run again (the
  // record still `queued`), whose dispatch add is then ignored (same job id). The add is
  // awaited: BullMQ sends its script a few awaits later than a command issued beside it,
  // so side by side the record would reach Redis first, and a crash then left a record
  // `dispatched` with no job behind it, which the intake job's rerun drops as a duplicate.
  // Only from `queued`: a fast worker may already have moved it on. Whatever held it no
  // longer does.
  await deps.queues.dispatch(m.priority).add('send', data, { jobId: jobIdOf(m), delay });
  await Promise.all([
    deps.store.transition(m.id, 'dispatched', { from: ['queued', 'retrying'] }),
    deps.store.noteHeld(m.id, undefined),
  ]);
  return { kind: 'dispatched', data, delay };
}
