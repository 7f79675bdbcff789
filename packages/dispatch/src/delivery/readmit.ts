import { jobIdOf, type DispatchJobData, type IntakeJobData, type RetryCounts } from '@sluice/core';
import { familyOf, type DeliveryContext, type RetryOutcome } from './context.js';

/** A retry's plan, as {@link readmit} writes it. */
export interface ReadmitRetry {
  delayMs: number;
  counts: RetryCounts;
  outcome: RetryOutcome;
}

/**
 * Gives a message back to admission, its intake or campaign queue, to be admitted again
 * (after `delayMs`): its campaign was paused or an override suspends it, its circuit opened,
 * it came late or its rate was lowered and its quotas are busy now, or it is to be retried,
 * in which case it goes through every quota check again at the rates lowered meanwhile. The
 * record keeps the new job's `hop` (where `explain` finds it). Record first, then job: this
 * dispatch job stays until we return, so a crash in between runs it again, and the new
 * intake job never finds a record still `submitted` (which admission takes for a duplicate).
 */
export async function readmit(
  ctx: DeliveryContext,
  m: DispatchJobData,
  reason: string,
  retry?: ReadmitRetry,
): Promise<void> {
  const { store, queues } = ctx;
  const queue = queues.intakeOf(m);
  const {
    provider: _p,
    receiver: _r,
    receiverLimit: _l,
    admittedAt: _a,
    decidedAt: _d,
    failover: _f,
    ticket: _t,
    ...message
  } = m;
  const hop = (m.hop ?? 0) + 1;
  const data: IntakeJobData = retry ? { ...message, hop, retry: retry.counts } : { ...message, hop };
  if (retry) {
    await store.markRetrying(m.id, {
      // Its first temporary failure (no retry of any family yet; the learner counts
      // `recipient_deferred` on the same test) goes on the outcome stream.
      firstDeferral: Object.keys(m.retry?.byFamily ?? {}).length === 0,
      reply: retry.outcome.reply,
      outcome: familyOf(retry.outcome),
      retryAt: ctx.clock() + retry.delayMs,
      hop,
    });
  } else {
    await store.markRequeued(m.id, { reason, hop });
  }
  await queue.add('send', data, { jobId: jobIdOf(data), ...(retry ? { delay: retry.delayMs } : {}) });
  // After the add: a scheduler that found its campaign's queue empty meanwhile keeps it.
  if (m.campaignId !== undefined) await ctx.work.mark([m.campaignId]);
}
