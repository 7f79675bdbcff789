import { Queue } from 'bullmq';
import { INTAKE_JOB_OPTIONS, QUEUE_OPTIONS } from '@sluice/core';
import type { Redis } from 'ioredis';

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
      q = new Queue(name, { ...QUEUE_OPTIONS, connection: this.redis, prefix: this.prefix, defaultJobOptions: { ...INTAKE_JOB_OPTIONS } });
      this.#queues.set(name, q);
    }
    return q;
  }

  async close(): Promise<void> {
    await Promise.all([...this.#queues.values()].map((q) => q.close()));
    this.#queues.clear();
  }
}
