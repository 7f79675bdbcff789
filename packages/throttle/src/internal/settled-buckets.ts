import type { Redis } from 'ioredis';

/** A bucket's counts as Redis holds them (`HGETALL`): field → count. */
export type BucketCounts = Record<string, string>;

/**
 * The reader's copy of signal buckets no writer adds to any more. A bucket is written by the
 * flush after its second (writers flush once a second) and, after a failed flush, not at all:
 * those counts go to the bucket of the flush that lands them. So a bucket that ended `settleMs`
 * ago is final, and a reader fetches it once instead of at every read of every window it is
 * in: the governor reads each receiver's and circuit's whole window each tick, which was ~60
 * `HGETALL` a message at a few hundred messages a second. Copies go when their bucket leaves
 * the retention, and all of them after a failed read (Redis was away: what it holds now is
 * what counts).
 */
export class SettledBuckets {
  private readonly copies = new Map<string, { start: number; counts: BucketCounts }>();

  constructor(
    private readonly redis: Redis,
    private readonly options: { bucketMs: number; retainMs: number; settleMs: number; clock: () => number },
  ) {}

  /** The counts of each bucket (`key` of its `start`), fetching only those not settled here. */
  async read(buckets: readonly { key: string; start: number }[]): Promise<BucketCounts[]> {
    const { bucketMs, settleMs, clock } = this.options;
    const now = clock();
    const out: (BucketCounts | undefined)[] = buckets.map((b) => this.copies.get(b.key)?.counts);
    const missing = buckets.flatMap((b, i) => (out[i] === undefined ? [i] : []));
    if (missing.length > 0) {
      // Commands side by side, not a pipeline: ioredis copies every script of the connection
      // into each pipeline it makes (~85 µs with BullMQ's), more than these few reads cost.
      let results: BucketCounts[];
      try {
        results = await Promise.all(missing.map((i) => this.redis.hgetall(buckets[i]!.key)));
      } catch (error) {
        this.copies.clear();
        throw error;
      }
      for (const [k, i] of missing.entries()) {
        const counts = results[k]!;
        out[i] = counts;
        const b = buckets[i]!;
        if (b.start + bucketMs + settleMs <= now) this.copies.set(b.key, { start: b.start, counts });
      }
    }
    return out as BucketCounts[];
  }

  /** Forgets the copies of buckets past the retention. */
  prune(): void {
    const oldest = this.options.clock() - this.options.retainMs - this.options.bucketMs;
    for (const [key, copy] of this.copies) if (copy.start < oldest) this.copies.delete(key);
  }

  /** How many buckets are kept (tests). */
  get size(): number {
    return this.copies.size;
  }
}
