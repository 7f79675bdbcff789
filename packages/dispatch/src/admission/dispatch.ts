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
  // Record first, then job, each awaited: no worker can take the job before the record
  // says `dispatched` (one that readmits it at once, its campaign paused, would otherwise
  // have its `queued` overwritten by a late `dispatched` here, and the readmitted job be
  // dropped as a duplicate). A crash in between leaves a `dispatched` record with no job:
  // the intake job runs again and `checkRecord` finds the job missing, so it is admitted
  // again. Only from `queued`, `retrying` (or that `dispatched`): a concurrent run of the
  // same intake job may already have handed it to a worker. Whatever held it no longer does:
  // the move clears the held note, in the same call, when there is one.
  await deps.store.transition(m.id, 'dispatched', { from: ['queued', 'retrying', 'dispatched'] });
  await deps.queues.dispatch(m.priority).add('send', data, { jobId: jobIdOf(m), delay });
  return { kind: 'dispatched', data, delay };
}
