import { Queue, type JobsOptions } from 'bullmq';
import type { Redis } from 'ioredis';

/**
 * Intake jobs are removed when they finish: the message record, not the job, keeps
 * the outcome (BullMQ keeps finished jobs forever otherwise). An unexpected scheduler
 * error retries the job every few seconds instead of failing it.
 */
export const INTAKE_JOB_OPTIONS: JobsOptions = {
  removeOnComplete: true,
  removeOnFail: { age: 7 * 86_400 },
  attempts: 1_000,
  backoff: { type: 'fixed', delay: 5_000 },
};

/** Queue handles by name, sharing one connection. */
export class QueueCache {
  readonly #queues = new Map<string, Queue>();
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
  ) {}

  get(name: string): Queue {
    let q = this.#queues.get(name);
    if (!q) {
      q = new Queue(name, { connection: this.redis, prefix: this.prefix, defaultJobOptions: INTAKE_JOB_OPTIONS });
      this.#queues.set(name, q);
    }
    return q;
  }

  async close(): Promise<void> {
    await Promise.all([...this.#queues.values()].map((q) => q.close()));
    this.#queues.clear();
  }
}
