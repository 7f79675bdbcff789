import { stableHash } from './keys.js';
import type { QueuedMessage } from './message.js';

/** What a message has been through: carried by its jobs from retry to retry. */
export interface RetryCounts {
  /** Failed attempts so far, every family. */
  failures: number;
  /** Failed attempts per reply family. */
  byFamily: Partial<Record<string, number>>;
}

/** An intake or campaign job: a message, and its retry counts once it has been tried. */
export interface IntakeJobData extends QueuedMessage {
  retry?: RetryCounts;
  /** How many times a worker gave it back to admission (a retry, a pause, a missed slot). */
  hop?: number;
  /**
   * Its place in a busy layer's line (the limiter's ticket), shown again at its next
   * admission; a trip back to admission starts without one.
   */
  ticket?: { key: string; slice: number; number: number };
}

/**
 * The BullMQ job id of a message's jobs on one trip through the queues: the message id on
 * the first, `<id>-<hop>` after it went back to admission. A repeated id is ignored while
 * the first job exists, and the job that gave a message back may not be removed yet when
 * its next one is added: one id per trip keeps that next job from being dropped, while a
 * crash that runs one step twice still adds the same job twice (the second is ignored).
 */
export function jobIdOf(m: { id: string; hop?: number | undefined }): string {
  return m.hop ? `${m.id}-${m.hop}` : m.id;
}

/** A dispatch job: an admitted message and where it goes. */
export interface DispatchJobData extends IntakeJobData {
  provider: string;
  /** The receiver bucket's name (stats). */
  receiver: string;
  /**
   * The receiver bucket's limit as admission found it (by the domain's organisation), so a
   * worker that asks the limiter again needs neither DNS nor the config's lookup. Absent on
   * jobs admitted before it was carried: the worker then looks the bucket up by name.
   */
  receiverLimit?: { rate?: number | undefined; burst?: number | undefined };
  /** The slot it was admitted for (epoch ms). */
  admittedAt: number;
  /** When that decision was taken (epoch ms): a key lowered since asks the limiter again. */
  decidedAt?: number;
  /** Admitted to a provider other than its route's first choice (failover). */
  failover?: boolean;
}

/** A dispatch job's name for a batch (its data a {@link DispatchBatchData}); a single message's is `send`. */
export const BATCH_JOB = 'batch';

/**
 * A dispatch batch: admitted campaign recipients that go in one ESP call
 * (docs/design/batches.md). One provider, one campaign, one message home; each recipient as
 * its own dispatch job would carry it, and each keeps its own record.
 */
export interface DispatchBatchData {
  batch: DispatchJobData[];
}

/**
 * The BullMQ job id of a batch: its first recipient's job on this trip and a hash of all of
 * theirs. A batch written again with the same recipients (its scheduler died before its
 * admissions completed) is the same job, ignored while the first exists; one written again with
 * other recipients is another job, so none of them is left out (the records' marks keep any
 * recipient in both from going twice).
 */
export function batchJobIdOf(batch: readonly { id: string; hop?: number | undefined }[]): string {
  const ids = batch.map(jobIdOf);
  return `batch-${ids[0] ?? ''}-${stableHash(ids.join(' ')).toString(36)}`;
}

/** A campaign job's name for a block (its data a {@link CampaignBlockData}); a single recipient's is `send`. */
export const BLOCK_JOB = 'block';

/**
 * A campaign job of many recipients (docs/design/batches.md, "Campaign jobs by block"): up to
 * `COMPACT_BLOCK` recipients of one compact block (so one message home) as the injection wrote
 * them, each as its own campaign job would carry it. The scheduler admits each on its own.
 */
export interface CampaignBlockData {
  block: IntakeJobData[];
}

/**
 * The BullMQ job id of a block: its first recipient's job and how many it holds. A chunk written
 * again (its MULTI failed or was not answered) writes the same blocks, so the same ids: ignored.
 */
export function blockJobIdOf(block: readonly { id: string; hop?: number | undefined }[]): string {
  return `block-${block[0] === undefined ? '' : jobIdOf(block[0])}-${block.length}`;
}

/** The messages a job carries: a block's or a batch's recipients, or the one message it is. */
export function messagesOfJob<T extends { id: string }>(data: T | { block: T[] } | { batch: T[] }): T[] {
  if ('block' in data && Array.isArray(data.block)) return data.block;
  if ('batch' in data && Array.isArray(data.batch)) return data.batch;
  return [data as T];
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

/**
 * Options every Sluice `Queue` is made with. Each new Queue handle writes them to the
 * queue's meta, so they must be the same everywhere. The events stream is capped lower
 * than BullMQ's 10,000: at a few hundred bytes an event, a busy queue's stream otherwise
 * holds megabytes nobody reads.
 */
export const QUEUE_OPTIONS = { streams: { events: { maxLen: 1_000 } } } as const;
