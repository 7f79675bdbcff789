import { jobIdOf, type DispatchJobData, type IntakeJobData, type ReceiverLimit } from '@sluice/core';
import type { AdmissionResult, Deps } from './types.js';

/**
 * The last step: an admitted message goes to its class's dispatch queue, with where it was
 * routed and its receiver's limit (so a worker asking the limiter again needs no DNS). A booked one waits in the dispatch queue until its slot,
 * so it never queues behind the intake backlog and never asks the limiter twice.
 */
export async function dispatch(
  deps: Pick<Deps, 'queues'>,
  m: IntakeJobData,
  admitted: Admitted,
  now: number,
): Promise<AdmissionResult> {
  const data = dispatchData(m, admitted, now);
  const { delay } = admitted;
  // The job alone: the record keeps its state (`queued` or `retrying`) until a worker's
  // `submit` mark, so admission writes no record on the happy path. A crash after the add
  // runs the intake job again; admitted again, its add is ignored while this job exists
  // (same job id), and a job that ran meanwhile left its record final or `submitted`, which
  // `checkRecord` or the worker's mark refuses. Whatever held the message, the mark clears.
  await deps.queues.dispatchOf(m).add('send', data, { jobId: jobIdOf(m), delay });
  return { kind: 'dispatched', data, delay };
}

/** Where an admitted message was routed, and when its slot is. */
export interface Admitted {
  provider: string;
  receiver: ReceiverLimit;
  failover: boolean;
  /** Its slot, ms from now (0: now). */
  delay: number;
}

/** An admitted message's dispatch data: where it was routed, its receiver's limit, its slot. */
export function dispatchData(m: IntakeJobData, admitted: Admitted, now: number): DispatchJobData {
  const { provider, receiver, failover, delay } = admitted;
  const { ticket: _used, ...message } = m;
  return {
    ...message,
    provider,
    receiver: receiver.name,
    receiverLimit: { rate: receiver.rate, burst: receiver.burst },
    admittedAt: now + delay,
    decidedAt: now,
    ...(failover ? { failover: true } : {}),
  };
}
