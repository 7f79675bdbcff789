import type { Redis } from 'ioredis';
import { PRIORITY_CLASSES, type Keys, type PriorityClass } from '@sluice/core';

/** Options of {@link createLatency}. */
export interface LatencyOptions {
  /** A connection of the caller's; not closed here. */
  redis: Redis;
  keys: Keys;
  /** Samples are kept in memory and written this often. @defaultValue `1000` */
  flushMs?: number;
  /** Samples kept per class (the list is trimmed to this). @defaultValue `1000` */
  keep?: number;
  /** A class with no send for this long has no latency to show. @defaultValue `600_000` */
  retainMs?: number;
}

/** Latency samples of sent mail, per class, shared through capped Redis lists. */
export interface Latency {
  /** Keeps one sample (in memory until the next flush): a send costs no round trip. */
  record(priority: PriorityClass, ms: number): void;
  /** Writes what was recorded since the last flush. */
  flush(): Promise<void>;
  /** Flushes and stops the timer. */
  close(): Promise<void>;
}

/** Creates the latency recorder of a worker. */
export function createLatency(options: LatencyOptions): Latency {
  const { redis, keys } = options;
  const keep = options.keep ?? 1000;
  const retainMs = options.retainMs ?? 600_000;
  const pending = new Map<PriorityClass, number[]>();
  let flushing: Promise<void> = Promise.resolve();
  const timer = setInterval(() => {
    // A sample lost to a Redis blip only thins the figures; it is not worth a retry.
    void self.flush().catch(() => undefined);
  }, options.flushMs ?? 1000);
  timer.unref();

  const self: Latency = {
    record(priority, ms) {
      const list = pending.get(priority);
      if (list) list.push(Math.max(0, Math.round(ms)));
      else pending.set(priority, [Math.max(0, Math.round(ms))]);
    },
    flush() {
      flushing = flushing.then(async () => {
        if (pending.size === 0) return;
        // One MULTI a class, side by side: each class's list is a key of its own slot.
        const writes = PRIORITY_CLASSES.flatMap((p) => {
          const samples = pending.get(p);
          if (!samples?.length) return [];
          const key = keys.latency(p);
          return [
            redis
              .multi()
              .lpush(key, ...samples.slice(-keep))
              .ltrim(key, 0, keep - 1)
              .pexpire(key, retainMs)
              .exec(),
          ];
        });
        pending.clear();
        await Promise.all(writes);
      });
      return flushing;
    },
    async close() {
      clearInterval(timer);
      await self.flush().catch(() => undefined);
    },
  };
  return self;
}
