import type { Redis } from 'ioredis';
import { HOMES, type DispatchJobData, type Keys } from '@sluice/core';

/**
 * The dispatch batches schedulers are filling, kept in Redis (docs/design/batches.md): a
 * recipient whose batch is due later than `batches.fillMs` is put in its batch's list, in its
 * home, and its admission ends there; the scheduler writes the batch's job when it is due and
 * drops the list. A list whose due time is long past (its scheduler died, or Redis refused the
 * job) is written by whichever scheduler finds it ({@link FillingBatches.overdue}).
 */
export interface FillingBatches {
  /** Puts recipients in a batch being filled, with the time its job is due at the latest (kept from the first put). */
  put(home: number, id: string, dueBy: number, entries: readonly DispatchJobData[]): Promise<void>;
  /** Drops a batch whose job is written. */
  drop(home: number, id: string): Promise<void>;
  /** The batches due before `before` (at most `limit` a home), with their recipients. */
  overdue(before: number, limit?: number): Promise<FilledBatch[]>;
  /** Every batch being filled, with its recipients (what a campaign's cancel reads). */
  all(): Promise<FilledBatch[]>;
}

/** A batch being filled, as Redis keeps it. */
export interface FilledBatch {
  home: number;
  id: string;
  entries: DispatchJobData[];
}

/** The batches being filled, on the queues' Redis. */
export function createFillingBatches(redis: Redis, keys: Keys): FillingBatches {
  async function read(home: number, ids: string[]): Promise<FilledBatch[]> {
    if (ids.length === 0) return [];
    const pipeline = redis.pipeline();
    for (const id of ids) pipeline.lrange(keys.batchFilling(home, id), 0, -1);
    const lists = (await pipeline.exec()) ?? [];
    return ids.map((id, i) => {
      const [err, list] = lists[i] ?? [null, []];
      if (err) throw err;
      return { home, id, entries: (list as string[]).map((e) => JSON.parse(e) as DispatchJobData) };
    });
  }

  async function listed(range: (home: number) => Promise<string[]>): Promise<FilledBatch[]> {
    const found = await Promise.all(HOMES.map(async (home) => read(home, await range(home))));
    // A batch whose list is gone was written and dropped between the two reads.
    return found.flat().filter((b) => b.entries.length > 0);
  }

  return {
    async put(home, id, dueBy, entries) {
      const list = keys.batchFilling(home, id);
      await redis
        .multi()
        .rpush(list, ...entries.map((e) => JSON.stringify(e)))
        .zadd(keys.batchesFilling(home), 'NX', dueBy, id)
        .exec()
        .then(failed);
    },
    async drop(home, id) {
      await redis.multi().del(keys.batchFilling(home, id)).zrem(keys.batchesFilling(home), id).exec().then(failed);
    },
    overdue: (before, limit = 100) =>
      listed((home) => redis.zrangebyscore(keys.batchesFilling(home), '-inf', `(${before}`, 'LIMIT', 0, limit)),
    all: () => listed((home) => redis.zrange(keys.batchesFilling(home), 0, '-1')),
  };
}

/** Throws the first error of a MULTI's replies. */
function failed(replies: [Error | null, unknown][] | null): void {
  if (replies === null) throw new Error('MULTI aborted');
  for (const [err] of replies) if (err) throw err;
}
