import type { Redis } from 'ioredis';
import { HOME_COUNT, HOMES, SluiceError, type Keys, type PriorityClass, type Retention } from '@sluice/core';
import { retainArgs } from '../records/compact.js';
import { retainResult } from '../redis/results.js';
import { defineScripts, type StoreRedis } from '../redis/scripts.js';
import { holdsStream } from './tenant-groups.js';
import { compareIds, decode, merged, nextId, pairs, sleep, splitId, type Entry, type OutcomeEvent } from './entries.js';

export type { OutcomeEvent } from './entries.js';

/** Options of {@link createOutcomes}. */
export interface OutcomesOptions {
  /** A connection of the caller's; not closed here. */
  redis: Redis;
  /**
   * The connection `read` blocks on (`blockMs` above 0): a blocked connection serves
   * nothing else, so give one of its own. On a Redis Cluster `read` polls instead (a read of
   * several streams blocks on one node only). @defaultValue `redis`
   */
  blocking?: Redis | undefined;
  keys: Keys;
  /** Events left unacknowledged this long by a consumer (it died) are claimed by the next `read`. @defaultValue `60_000` */
  claimIdleMs?: number | undefined;
  /** `outcomes.maxBacklog` of the config. @defaultValue `250_000` */
  maxBacklog?: number | undefined;
  /** How long a compact record is kept (`delivery.recordTtlSeconds`). @defaultValue 7 days */
  recordTtlSeconds?: number | undefined;
  /**
   * `outcomes.tenantHold` of the config: how far behind a tenant's group (made over HTTP) may
   * fall and still hold the stream ({@link holdsStream}). @defaultValue `50_000`
   */
  tenantHold?: number | undefined;
}

/** Options of `read`. */
export interface ReadOptions {
  /** At most this many events. @defaultValue `100` */
  count?: number | undefined;
  /** Wait up to this long for a new event when none is there (0: do not wait). @defaultValue `0` */
  blockMs?: number | undefined;
}

/** What one `settle` pass did. */
export interface SettleResult {
  /** Events removed from the stream: acknowledged by every group (all of them, with no group). */
  trimmed: number;
  /** Records moved into their campaign's compact block, or shrunk in place. */
  compacted: number;
  /** Records deleted (`until-acknowledged`). */
  deleted: number;
}

/**
 * The outcome stream: consumer groups read and acknowledge it; its owner trims it and applies
 * retention. It is one stream per message home (`keys.outcomes(home)`: written in the same
 * script as the record), read as one: a group is created on every home's stream, a read merges
 * them oldest first, and an event's id names its home.
 */
export interface Outcomes {
  /**
   * Creates a consumer group (idempotent: `created: false` if it exists, left as it is).
   * `from: 'now'` gets events from now on; `'start'` also every event still kept.
   */
  subscribe(group: string, options?: { from?: 'now' | 'start' }): Promise<{ created: boolean }>;
  /** Removes a group: its unacknowledged events no longer hold the stream. `false` if there was none. */
  unsubscribe(group: string): Promise<boolean>;
  /** Every group's name (each home's stream has the same groups: the first's are read). */
  groups(): Promise<string[]>;
  /**
   * Events for `consumer` of `group`, oldest first: first its own not yet acknowledged
   * (a consumer restarted under the same name gets them again), then those another consumer
   * left unacknowledged for `claimIdleMs` (it died), then new ones. At least once: acknowledge
   * what you have handled before reading again. `unknown_group` without `subscribe` first.
   */
  read(group: string, consumer: string, options?: ReadOptions): Promise<OutcomeEvent[]>;
  /** Acknowledges events by their ids; resolves how many were pending. */
  ack(group: string, ids: readonly string[]): Promise<number>;
  /**
   * Events not yet acknowledged by every group (and the last half second's, not yet trimmed):
   * injection waits while this is above {@link Outcomes.maxBacklog}.
   */
  backlog(): Promise<number>;
  readonly maxBacklog: number;
  /**
   * The owner's pass (the governor leader's chore): applies each class's retention to the
   * records of events every group has acknowledged, then trims those events. Idempotent; at
   * most `maxEntries` events a pass (default 10,000: 20,000 a second at the governor's 500 ms).
   */
  settle(retention: Readonly<Record<PriorityClass, Retention>>, maxEntries?: number): Promise<SettleResult>;
}

/** A group's or consumer's name; a tenant's group over HTTP is `tenant:<tenant>:<name>`, up to 136. */
const NAME = /^[A-Za-z0-9_.:-]{1,160}$/;
const SHRINKABLE = new Set(['sent', 'cancelled', 'suppressed']);
const BATCH = 1000;
/** An event's id: its home, then its stream entry's id. */
const EVENT_ID = /^\d{1,2}-\d+-\d+$/;

function checkName(value: unknown, path: string): string {
  if (typeof value !== 'string' || !NAME.test(value))
    throw new SluiceError('invalid_argument', `${path}: must match [A-Za-z0-9_.:-]{1,160}`, { path });
  return value;
}

function checkInteger(value: number | undefined, fallback: number, min: number, max: number, path: string): number {
  if (value === undefined) return fallback;
  if (!Number.isSafeInteger(value) || value < min || value > max)
    throw new SluiceError('invalid_argument', `${path}: must be an integer from ${min} to ${max}`, { path });
  return value;
}

/** Redis error replies start with their code: NOGROUP is a missing stream or group. */
function unknownGroup(err: unknown, group: string): Error {
  if (err instanceof Error && err.message.startsWith('NOGROUP')) {
    return new SluiceError('unknown_group', `no consumer group ${group}: subscribe first`, {
      path: 'group',
      cause: err,
    });
  }
  return err instanceof Error ? err : new Error(String(err));
}

/**
 * Creates the outcome stream's face. The stream is written by the store's `finalize` and its
 * first-deferral move (`markRetrying`).
 */
export function createOutcomes(options: OutcomesOptions): Outcomes {
  const redis: StoreRedis = defineScripts(options.redis);
  const blocking = options.blocking ?? options.redis;
  const { keys } = options;
  const streams = HOMES.map((h) => keys.outcomes(h));
  const claimIdleMs = options.claimIdleMs ?? 60_000;
  const ttl = options.recordTtlSeconds ?? 7 * 86_400;
  const tenantHold = options.tenantHold ?? 50_000;
  const xreadgroup = (conn: Redis, ...args: (string | number)[]) =>
    (conn as unknown as { xreadgroup(...a: (string | number)[]): Promise<unknown> }).xreadgroup(...args) as Promise<
      [string, Entry[]][] | null
    >;

  /** One XREADGROUP over the streams of `of` (one node's), decoded by home. */
  async function readOnce(
    conn: Redis,
    of: readonly number[],
    group: string,
    consumer: string,
    count: number,
    blockMs: number,
    from: string,
  ) {
    const args: (string | number)[] = ['GROUP', group, consumer, 'COUNT', count];
    if (blockMs > 0) args.push('BLOCK', blockMs);
    const reply = await xreadgroup(
      conn,
      ...args,
      'STREAMS',
      ...of.map((h) => streams[h]!),
      ...of.map(() => from),
    ).catch((err: unknown) => {
      throw unknownGroup(err, group);
    });
    // An entry given back without its fields was trimmed while pending (a tenant's group that
    // fell behind, holdsStream): acknowledged, so it is not given back again.
    for (const [key, entries] of reply ?? []) {
      const gone = entries.filter(([, fields]) => fields === null).map(([id]) => id);
      if (gone.length > 0) await redis.xack(key, group, ...gone);
    }
    return (reply ?? []).map(([key, entries]) => decode(streams.indexOf(key), entries));
  }

  // Whether Redis runs as a cluster (asked once): there a read of several streams is refused,
  // as the homes' streams are of different slots.
  let clustered: Promise<boolean> | undefined;
  const isCluster = (): Promise<boolean> =>
    (clustered ??= redis.info('cluster').then(
      (info) => /cluster_enabled:1/.test(info),
      (err: unknown) => {
        clustered = undefined;
        throw err;
      },
    ));

  /**
   * Entries of every home for `consumer`, from `from` (`0`: its own pending; `>`: new), waiting
   * up to `blockMs` for one: one command on one Redis; on a cluster, one per home, polled.
   */
  async function readGroup(conn: Redis, group: string, consumer: string, count: number, blockMs: number, from: string) {
    if (!(await isCluster())) return merged(await readOnce(conn, HOMES, group, consumer, count, blockMs, from), count);
    const until = Date.now() + blockMs;
    for (;;) {
      const parts = await Promise.all(HOMES.map((h) => readOnce(conn, [h], group, consumer, count, 0, from)));
      const events = merged(parts.flat(), count);
      if (events.length > 0 || Date.now() >= until) return events;
      await sleep(Math.min(100, until - Date.now()));
    }
  }

  /**
   * The id below which every group that holds the stream ({@link holdsStream}) has acknowledged
   * every event of one home's stream: per group its oldest pending event, or the one after the
   * last it was given; with no such group, past the last event.
   */
  async function acknowledgedBelow(stream: string): Promise<string | undefined> {
    const rows = ((await redis.xinfo('GROUPS', stream).catch(() => undefined)) ?? []) as unknown[];
    const groups = rows
      .map(pairs)
      .filter((g) =>
        holdsStream(
          { name: String(g.name), pending: Number(g.pending), lag: g.lag === null ? null : Number(g.lag) },
          tenantHold,
        ),
      );
    let below: string | undefined;
    for (const g of groups) {
      let at = nextId(String(g['last-delivered-id']));
      if (Number(g.pending) > 0) {
        const summary = (await redis.xpending(stream, String(g.name))) as [number, string | null];
        if (summary[1]) at = summary[1];
      }
      if (below === undefined || compareIds(at, below) < 0) below = at;
    }
    if (groups.length > 0) return below;
    const last = (await redis.xrevrange(stream, '+', '-', 'COUNT', 1)) as Entry[];
    return last[0] ? nextId(last[0][0]) : undefined;
  }

  /** One home's part of a settle pass, at most `max` entries. */
  async function settleHome(stream: string, classes: string[], max: number, result: SettleResult): Promise<void> {
    const below = await acknowledgedBelow(stream);
    if (below === undefined) return;
    const keepAll = classes.every((r) => r === 'full');
    let trimmed = 0;
    while (trimmed < max) {
      const entries = (await redis.xrange(stream, '-', `(${below}`, 'COUNT', BATCH)) as Entry[];
      if (entries.length === 0) break;
      // One home's records and stream share its hash tag: one pipeline serves them on a cluster too.
      if (!keepAll) await retain(decode(0, entries), classes, result);
      // Trimmed after their records: a pass cut off here only does the same again.
      await redis.xtrim(stream, 'MINID', nextId(entries[entries.length - 1]![0]));
      trimmed += entries.length;
      if (entries.length < BATCH) break;
    }
    result.trimmed += trimmed;
  }

  async function retain(events: readonly OutcomeEvent[], classes: string[], result: SettleResult): Promise<void> {
    const pipeline = redis.pipeline();
    const scripted = pipeline as unknown as { sluiceRetain(...args: (string | number)[]): unknown };
    let calls = 0;
    for (const e of events) {
      if (!SHRINKABLE.has(e.state)) continue;
      scripted.sluiceRetain(...retainArgs(keys, e.messageId, classes, ttl));
      calls++;
    }
    const replies = calls > 0 ? ((await pipeline.exec()) ?? []) : [];
    for (const [err, reply] of replies) {
      if (err) throw err;
      const retained = retainResult(reply);
      if (retained === 'compacted' || retained === 'shrunk') result.compacted++;
      if (retained === 'deleted') result.deleted++;
    }
  }

  return {
    maxBacklog: options.maxBacklog ?? 250_000,

    async subscribe(group, opts = {}) {
      checkName(group, 'group');
      const from = opts.from ?? 'now';
      if (from !== 'now' && from !== 'start')
        throw new SluiceError('invalid_argument', `from: must be 'now' or 'start'`, { path: 'from' });
      // On every home's stream; a subscribe cut off halfway is finished by the next.
      const created = await Promise.all(
        streams.map(async (stream) => {
          try {
            await redis.xgroup('CREATE', stream, group, from === 'now' ? '$' : '0', 'MKSTREAM');
            return true;
          } catch (err) {
            if (err instanceof Error && err.message.startsWith('BUSYGROUP')) return false;
            throw err;
          }
        }),
      );
      return { created: created.includes(true) };
    },

    async unsubscribe(group) {
      checkName(group, 'group');
      const gone = await Promise.all(streams.map((stream) => redis.xgroup('DESTROY', stream, group).catch(() => 0)));
      return gone.some((n) => Number(n) === 1);
    },

    async groups() {
      const rows = ((await redis.xinfo('GROUPS', streams[0]!).catch(() => [])) ?? []) as unknown[];
      return rows.map((row) => String(pairs(row).name));
    },

    async read(group, consumer, opts = {}) {
      checkName(group, 'group');
      checkName(consumer, 'consumer');
      const count = checkInteger(opts.count, 100, 1, 10_000, 'count');
      const blockMs = checkInteger(opts.blockMs, 0, 0, 600_000, 'blockMs');
      const own = await readGroup(redis, group, consumer, count, 0, '0');
      if (own.length > 0) return own;
      const claimed = await Promise.all(
        HOMES.map(async (h) => {
          const reply = (await redis
            .xautoclaim(streams[h]!, group, consumer, claimIdleMs, '0-0', 'COUNT', count)
            .catch((err: unknown) => {
              throw unknownGroup(err, group);
            })) as [string, Entry[]];
          return decode(h, reply[1] ?? []);
        }),
      );
      const taken = merged(claimed, count);
      if (taken.length > 0) return taken;
      return readGroup(blocking, group, consumer, count, blockMs, '>');
    },

    async ack(group, ids) {
      checkName(group, 'group');
      const given: unknown = ids;
      if (!Array.isArray(given) || given.some((id) => typeof id !== 'string' || !EVENT_ID.test(id)))
        throw new SluiceError('invalid_argument', 'ids: must be outcome event ids (<home>-<ms>-<seq>)', {
          path: 'ids',
        });
      if (ids.length === 0) return 0;
      const byHome = new Map<number, string[]>();
      for (const id of ids) {
        const { home, entry } = splitId(id);
        byHome.set(home, [...(byHome.get(home) ?? []), entry]);
      }
      const counts = await Promise.all([...byHome].map(([h, entries]) => redis.xack(streams[h]!, group, ...entries)));
      const acked = counts.reduce((a, b) => a + b, 0);
      if (acked === 0) {
        // XACK answers 0 for a group that does not exist: say so.
        const stream = streams[byHome.keys().next().value!]!;
        const groups = ((await redis.xinfo('GROUPS', stream).catch(() => [])) as unknown[]).map((g) => pairs(g).name);
        if (!groups.includes(group)) throw unknownGroup(new Error('NOGROUP'), group);
      }
      return acked;
    },

    async backlog() {
      const lengths = await Promise.all(streams.map((stream) => redis.xlen(stream)));
      return lengths.reduce((a, b) => a + b, 0);
    },

    async settle(retention, maxEntries = 10_000) {
      const result: SettleResult = { trimmed: 0, compacted: 0, deleted: 0 };
      const classes = [retention.critical, retention.high, retention.normal, retention.low];
      // The homes in turn, each up to its share of the pass.
      const share = Math.max(1, Math.ceil(maxEntries / HOME_COUNT));
      for (const stream of streams) await settleHome(stream, classes, share, result);
      return result;
    },
  };
}
