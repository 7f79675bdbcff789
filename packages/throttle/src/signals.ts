import type { Redis } from 'ioredis';
import { systemClock, type Clock, type Keys } from '@sluice/core';
import { defineScripts } from './internal/scripts.js';
import { SettledBuckets } from './internal/settled-buckets.js';

/** What a signal is counted for (docs/design/feedback-loop.md, signals). */
export type SignalKind = 'provider' | 'receiver' | 'pool' | 'stream' | 'campaign' | 'tenant' | 'circuit';

/** One key signals are counted under, e.g. `{ kind: 'receiver', name: 'google' }`. */
export interface SignalKey {
  kind: SignalKind;
  name: string;
}

/**
 * What is counted: attempts and their outcomes at the provider or receiver, and what the
 * ESPs report later (bounces, complaints). `deferred:<family>` counts temporary failures
 * by reply family; `matched:<rule>` the replies a governor rule's `match` describes;
 * `recipient_deferred` a recipient's first temporary failure, so each deferred recipient
 * counts once however often it is deferred; `listed` (under a circuit) a reply saying our IPs
 * are on a block list.
 * Sluice's own waits (a busy quota) are never signals: a rule must not
 * react to Sluice holding itself back.
 */
export type SignalField =
  | 'attempted'
  | 'accepted'
  | 'rejected'
  | `rejected:${string}`
  | 'throttled'
  | 'bounced_hard'
  | 'bounced_soft'
  | 'complained'
  | 'recipient_deferred'
  | 'listed'
  | `deferred:${string}`
  | `matched:${string}`;

/** Counts of one key over a window. */
export interface SignalWindow {
  /** The window actually covered, ms (whole buckets). */
  windowMs: number;
  /** How much of it had any signal at all, ms. */
  activeMs: number;
  counts: Readonly<Record<string, number>>;
  /** `counts[field]`, 0 when absent. */
  count(field: SignalField): number;
  /** Every `deferred:*` count together. */
  deferred(): number;
  /**
   * `numerator / denominator`, or `undefined` below `minSample` in the denominator: a
   * ratio over a handful of sends is noise, and acting on it would be a mistake.
   */
  ratio(numerator: number, denominator: number, minSample: number): number | undefined;
}

/** Options of {@link createSignals}. */
export interface SignalsOptions {
  /** A connection of the caller's; not closed here. */
  redis: Redis;
  keys: Keys;
  /** Width of one bucket: how finely the governor can tell before from after its decisions. @defaultValue `1000` */
  bucketMs?: number;
  /** The longest window anyone reads; buckets expire after it. @defaultValue `300_000` */
  retainMs?: number;
  /** Counts are summed in memory and written this often. @defaultValue `1000` */
  flushMs?: number;
  /**
   * A bucket that ended this long ago is final: a reader keeps its counts instead of fetching
   * it again. A writer stops adding to a bucket halfway there: counts that would land later (a
   * failed flush, a stalled process) go to the current bucket instead. Processes' clocks must
   * agree within that half. @defaultValue `5000`
   */
  settleMs?: number;
  /** Where the buckets' times come from (tests step it). @defaultValue `Date.now` */
  clock?: Clock;
}

/** Sliding windows of outcome counts per key, shared by every process through Redis. */
export interface Signals {
  /** Counts `n` of `field` for each key (in memory until the next flush). */
  record(keys: readonly SignalKey[], field: SignalField, n?: number): void;
  /** Writes what was recorded since the last flush. */
  flush(): Promise<void>;
  /**
   * Counts one `field` for each key (at most five) now, in Redis, once per `marker`: a
   * later call with the same marker (an ESP redelivering an event its first delivery
   * already counted, the api killed before it answered) counts nothing. For a writer that
   * must not lose a count to a crash, nor double one. Resolves whether it counted.
   */
  countOnce(marker: string, ttlSeconds: number, keys: readonly SignalKey[], field: SignalField): Promise<boolean>;
  /**
   * The counts of `key` over the `windowMs` up to `atMs` (whole buckets, the one holding
   * `atMs` included). A caller that worked the window out from its own clock passes that
   * clock's `atMs`, so a bucket boundary passing meanwhile does not shift the window.
   */
  read(key: SignalKey, windowMs: number, atMs?: number): Promise<SignalWindow>;
  /**
   * The counts of `key` in the buckets that began in [`fromMs`, `toMs`), for a reader that
   * adds finished buckets up once each (at most the retention back).
   */
  sum(key: SignalKey, fromMs: number, toMs: number): Promise<Record<string, number>>;
  /** Where the bucket holding `atMs` begins. */
  bucketOf(atMs: number): number;
  /** The width of a bucket. */
  readonly bucketMs: number;
  /** Names of `kind` that had signals within the retention. */
  active(kind: SignalKind): Promise<string[]>;
  /** Flushes and stops the timer. */
  close(): Promise<void>;
}

function windowOf(windowMs: number, activeMs: number, counts: Record<string, number>): SignalWindow {
  const count = (field: string): number => counts[field] ?? 0;
  return {
    windowMs,
    activeMs,
    counts,
    count,
    deferred: () => Object.entries(counts).reduce((n, [f, v]) => (f.startsWith('deferred:') ? n + v : n), 0),
    ratio: (numerator, denominator, minSample) =>
      denominator < minSample || denominator === 0 ? undefined : numerator / denominator,
  };
}

/**
 * Creates the signal counters. Each key's counts live in one small hash per time bucket
 * (`keys.signals(kind, name, bucketStart)`), expiring after `retainMs`; a window is the
 * sum of its buckets. Writers (workers, the webhook API) add up in memory and write once
 * a second in one pipeline, so a send costs no extra round trip.
 */
export function createSignals(options: SignalsOptions): Signals {
  const { redis, keys } = options;
  const scripted = defineScripts(redis);
  const bucketMs = options.bucketMs ?? 1_000;
  const retainMs = options.retainMs ?? 300_000;
  const clock = options.clock ?? systemClock;
  const settleMs = options.settleMs ?? 5_000;
  const settled = new SettledBuckets(redis, { bucketMs, retainMs, settleMs, clock });
  /** The start of the bucket `atMs` falls in. */
  const bucketOf = (atMs: number): number => Math.floor(atMs / bucketMs) * bucketMs;
  const pending = new Map<string, Map<string, number>>();
  let flushing: Promise<void> = Promise.resolve();
  const timer = setInterval(() => {
    settled.prune();
    void self.flush().catch(() => undefined); // kept for the next flush; Redis errors surface on reads
  }, options.flushMs ?? 1000);
  timer.unref();

  /** Bucket key → the signal key it counts (for the index) and where the bucket begins. */
  const names = new Map<string, { key: SignalKey; start: number }>();
  const bucketKey = (key: SignalKey, start: number): string => keys.signals(key.kind, key.name, start);
  /**
   * Whether counts of the bucket at `start` would land too late: readers keep a bucket
   * `settleMs` after it ends; writers stop adding to it halfway there (slack for the flush and
   * for clocks apart).
   */
  const tooLate = (start: number): boolean => start + bucketMs + settleMs / 2 <= clock();
  /** Adds counts to a pending bucket: `start`'s, or the current one's when that is too late. */
  const addPending = (key: SignalKey, start: number, counts: Iterable<[string, number]>): void => {
    const at = tooLate(start) ? bucketOf(clock()) : start;
    const k = bucketKey(key, at);
    let fields = pending.get(k);
    if (!fields) {
      fields = new Map();
      pending.set(k, fields);
      names.set(k, { key, start: at });
    }
    for (const [field, n] of counts) fields.set(field, (fields.get(field) ?? 0) + n);
  };
  /** The counts of `key`'s buckets beginning at `starts`, summed; and how many held any. */
  const readBuckets = async (key: SignalKey, starts: readonly number[]) => {
    const counts: Record<string, number> = {};
    let active = 0;
    for (const bucket of await settled.read(starts.map((start) => ({ key: bucketKey(key, start), start })))) {
      const entries = Object.entries(bucket);
      if (entries.length > 0) active += 1;
      for (const [field, n] of entries) counts[field] = (counts[field] ?? 0) + Number(n);
    }
    return { counts, active };
  };

  const self: Signals = {
    record(list, field, n = 1) {
      const start = bucketOf(clock());
      for (const key of list) addPending(key, start, [[field, n]]);
    },
    flush() {
      flushing = flushing.then(async () => {
        if (pending.size === 0) return;
        // A bucket whose counts waited past its settling (this process stalled) goes to now's.
        const stale = [...names].filter(([, b]) => tooLate(b.start));
        for (const [k, b] of stale) {
          const fields = pending.get(k)!;
          pending.delete(k);
          names.delete(k);
          addPending(b.key, b.start, fields);
        }
        const batch = [...pending];
        pending.clear();
        const named = new Map(names);
        names.clear();
        const pipeline = redis.pipeline();
        const indexed = new Set<string>();
        for (const [k, fields] of batch) {
          for (const [field, n] of fields) pipeline.hincrby(k, field, n);
          pipeline.pexpire(k, retainMs + bucketMs);
          const key = named.get(k)?.key;
          if (key && !indexed.has(`${key.kind}\n${key.name}`)) {
            indexed.add(`${key.kind}\n${key.name}`);
            // Scored by when it was last seen, so the index forgets quiet keys.
            pipeline.zadd(keys.signalIndex(key.kind), clock(), key.name);
          }
        }
        for (const kind of new Set([...indexed].map((k) => k.split('\n')[0]!))) {
          pipeline.zremrangebyscore(keys.signalIndex(kind), 0, clock() - retainMs);
        }
        const results = await pipeline.exec();
        const failed = results?.find(([err]) => err)?.[0];
        if (failed) {
          // Put the counts back: a signal lost to a blip would hide a problem. Once their
          // bucket has settled, in the bucket of the flush that lands them.
          for (const [k, fields] of batch) {
            const b = named.get(k);
            if (b) addPending(b.key, b.start, fields);
          }
          throw failed;
        }
      });
      return flushing;
    },
    async countOnce(marker, ttlSeconds, list, field) {
      if (list.length > 5) throw new RangeError('countOnce counts at most five keys');
      const start = bucketOf(clock());
      const slots = [0, 1, 2, 3, 4].map((i) => list[i]);
      const counted = await scripted.sluiceCountOnce(
        marker,
        ...slots.map((k) => (k ? bucketKey(k, start) : marker)),
        ...slots.map((k) => (k ? keys.signalIndex(k.kind) : marker)),
        ttlSeconds,
        field,
        retainMs + bucketMs,
        clock(),
        ...slots.map((k) => k?.name ?? ''),
      );
      return counted === 1;
    },
    async read(key, windowMs, atMs = clock()) {
      const buckets = Math.max(1, Math.ceil(windowMs / bucketMs));
      const newest = bucketOf(atMs);
      const starts = Array.from({ length: buckets }, (_, i) => newest - i * bucketMs);
      const { counts, active } = await readBuckets(key, starts);
      return windowOf(buckets * bucketMs, active * bucketMs, counts);
    },
    async sum(key, fromMs, toMs) {
      const first = Math.max(bucketOf(fromMs - 1) + bucketMs, bucketOf(clock() - retainMs) + bucketMs);
      const starts: number[] = [];
      for (let start = first; start < toMs; start += bucketMs) starts.push(start);
      return (await readBuckets(key, starts)).counts;
    },
    bucketOf,
    bucketMs,
    async active(kind) {
      return redis.zrangebyscore(keys.signalIndex(kind), clock() - retainMs, '+inf');
    },
    async close() {
      clearInterval(timer);
      await self.flush();
    },
  };
  return self;
}
