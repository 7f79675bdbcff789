import type { QueuedMessage } from './message.js';

/** A dispatch job: an admitted message and where it goes. */
export interface DispatchJobData extends QueuedMessage {
  provider: string;
  /** The receiver bucket's name (stats). */
  receiver: string;
  admittedAt: number;
  /** Temporary failures so far (throttles are not counted). */
  failures?: number;
}

/**
 * Options of every intake and campaign job. Finished jobs are removed: the message
 * record, not the job, keeps the outcome (BullMQ keeps finished jobs forever otherwise).
 * An unexpected scheduler error retries the job every few seconds instead of failing it.
 */
export const INTAKE_JOB_OPTIONS = {
  removeOnComplete: true,
  removeOnFail: { age: 7 * 86_400 },
  attempts: 1_000,
  backoff: { type: 'fixed', delay: 5_000 },
} as const;

/**
 * Options of every dispatch job. The worker retries outcomes itself (moveToDelayed);
 * these attempts only cover unexpected errors, such as Redis going away mid-job.
 */
export const DISPATCH_JOB_OPTIONS = INTAKE_JOB_OPTIONS;
