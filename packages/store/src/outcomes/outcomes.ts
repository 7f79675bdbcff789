import type { Redis } from 'ioredis';
import { SluiceError, type FinalState, type Keys, type PriorityClass, type Retention } from '@sluice/core';
import { retainArgs } from '../records/compact.js';
import { retainResult } from '../redis/results.js';
import { defineScripts, type StoreRedis } from '../redis/scripts.js';

/** One event of the outcome stream: a message's final state, or its first deferral. */
export interface OutcomeEvent {
  /** The stream entry's id (`<ms>-<seq>`): what `ack` takes. */
  id: string;
  messageId: string;
  /** The final state, or `deferred` for a message's first temporary failure (it is retried). */
  state: FinalState | 'deferred';
  campaignId: string | undefined;
  tenantId: string;
  /** The backend's own key of the recipient, when the message carries one. */
  key: string | undefined;
  providerMessageId: string | undefined;
  /** The outcome family of the last reply (`accepted`, `bad_recipient`, `greylisted`, …). */
  family: string | undefined;
  /** When it happened, epoch ms. */
  at: number;
}

/** Options of {@link createOutcomes}. */
export interface OutcomesOptions {
  /** A connection of the caller's; not closed here. */
  redis: Redis;
  /**
   * The connection `read` blocks on (`blockMs` above 0): a blocked connection serves
   * nothing else, so give one of its own. @defaultValue `redis`
   */
  blocking?: Redis | undefined;
  keys: Keys;
  /** Events left unacknowledged this long by a consumer (it died) are claimed by the next `read`. @defaultValue `60_000` */
  claimIdleMs?: number | undefined;
  /** `outcomes.maxBacklog` of the config. @defaultValue `250_000` */
  maxBacklog?: number | undefined;
  /** How long a compact record is kept (`delivery.recordTtlSeconds`). @defaultValue 7 days */
  recordTtlSeconds?: number | undefined;
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

/** The outcome stream: consumer groups read and acknowledge it; its owner trims it and applies retention. */
export interface Outcomes {
  /**
   * Creates a consumer group (idempotent: `created: false` if it exists, left as it is).
   * `from: 'now'` gets events from now on; `'start'` also every event still kept.
   */
  subscribe(group: string, options?: { from?: 'now' | 'start' }): Promise<{ created: boolean }>;
  /** Removes a group: its unacknowledged events no longer hold the stream. `false` if there was none. */
  unsubscribe(group: string): Promise<boolean>;
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

const NAME = /^[A-Za-z0-9_.:-]{1,64}$/;
const SHRINKABLE = new Set(['sent', 'cancelled', 'suppressed']);
const BATCH = 1000;

function checkName(value: unknown, path: string): string {
  if (typeof value !== 'string' || !NAME.test(value))
    throw new SluiceError('invalid_argument', `${path}: must match [A-Za-z0-9_.:-]{1,64}`, { path });
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

type Entry = [id: string, fields: string[] | null];

function decode(entries: readonly Entry[]): OutcomeEvent[] {
  const out: OutcomeEvent[] = [];
  for (const [id, fields] of entries) {
    if (!fields) continue;
    const f: Record<string, string> = {};
    for (let i = 0; i + 1 < fields.length; i += 2) f[fields[i]!] = fields[i + 1]!;
    out.push({
      id,
      messageId: f.id ?? '',
      state: (f.state ?? 'deferred') as OutcomeEvent['state'],
      campaignId: f.campaign || undefined,
      tenantId: f.tenant || 'default',
      key: f.key || undefined,
      providerMessageId: f.providerMessageId || undefined,
      family: f.family || undefined,
      at: Number(f.at ?? id.split('-')[0]),
    });
  }
  return out;
}

/** Stream ids compared as (ms, seq). */
function compareIds(a: string, b: string): number {
  const [am = 0, as = 0] = a.split('-').map(Number);
  const [bm = 0, bs = 0] = b.split('-').map(Number);
  return am - bm || as - bs;
}

/** The smallest id above `id`. */
function nextId(id: string): string {
  const [ms, seq] = id.split('-');
  return `${ms}-${Number(seq ?? 0) + 1}`;
}

function pairs(row: unknown): Record<string, unknown> {
  const list = row as unknown[];
  const out: Record<string, unknown> = {};
  for (let i = 0; i + 1 < list.length; i += 2) out[String(list[i])] = list[i + 1];
  return out;
}

/**
 * Creates the outcome stream's face. The stream is written by the store's `finalize` and its
 * first-deferral move (`markRetrying`).
 */
export function createOutcomes(options: OutcomesOptions): Outcomes {
  const redis: StoreRedis = defineScripts(options.redis);
  const blocking = options.blocking ?? options.redis;
  const { keys } = options;
  const stream = keys.outcomes();
  const claimIdleMs = options.claimIdleMs ?? 60_000;
  const ttl = options.recordTtlSeconds ?? 7 * 86_400;

  async function readGroup(conn: Redis, group: string, consumer: string, count: number, blockMs: number, from: string) {
    const args: (string | number)[] = ['GROUP', group, consumer, 'COUNT', count];
    if (blockMs > 0) args.push('BLOCK', blockMs);
    const reply = (await (conn as unknown as { xreadgroup(...a: (string | number)[]): Promise<unknown> })
      .xreadgroup(...args, 'STREAMS', stream, from)
      .catch((err: unknown) => {
        throw unknownGroup(err, group);
      })) as [string, Entry[]][] | null;
    return reply?.[0]?.[1] ?? [];
  }

  /**
   * The id below which every group has acknowledged every event: per group its oldest
   * pending event, or the one after the last it was given; with no group, past the last event.
   */
  async function acknowledgedBelow(): Promise<string | undefined> {
    const groups = ((await redis.xinfo('GROUPS', stream).catch(() => undefined)) ?? []) as unknown[];
    let below: string | undefined;
    for (const row of groups) {
      const g = pairs(row);
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

  return {
    maxBacklog: options.maxBacklog ?? 250_000,

    async subscribe(group, opts = {}) {
      checkName(group, 'group');
      const from = opts.from ?? 'now';
      if (from !== 'now' && from !== 'start')
        throw new SluiceError('invalid_argument', `from: must be 'now' or 'start'`, { path: 'from' });
      try {
        await redis.xgroup('CREATE', stream, group, from === 'now' ? '$' : '0', 'MKSTREAM');
        return { created: true };
      } catch (err) {
        if (err instanceof Error && err.message.startsWith('BUSYGROUP')) return { created: false };
        throw err;
      }
    },

    async unsubscribe(group) {
      checkName(group, 'group');
      return Number(await redis.xgroup('DESTROY', stream, group).catch(() => 0)) === 1;
    },

    async read(group, consumer, opts = {}) {
      checkName(group, 'group');
      checkName(consumer, 'consumer');
      const count = checkInteger(opts.count, 100, 1, 10_000, 'count');
      const blockMs = checkInteger(opts.blockMs, 0, 0, 600_000, 'blockMs');
      const own = decode(await readGroup(redis, group, consumer, count, 0, '0'));
      if (own.length > 0) return own;
      const claimed = (await redis
        .xautoclaim(stream, group, consumer, claimIdleMs, '0-0', 'COUNT', count)
        .catch((err: unknown) => {
          throw unknownGroup(err, group);
        })) as [string, Entry[]];
      const taken = decode(claimed[1] ?? []);
      if (taken.length > 0) return taken;
      return decode(await readGroup(blocking, group, consumer, count, blockMs, '>'));
    },

    async ack(group, ids) {
      checkName(group, 'group');
      const given: unknown = ids;
      if (!Array.isArray(given) || given.some((id) => typeof id !== 'string' || !/^\d+-\d+$/.test(id)))
        throw new SluiceError('invalid_argument', 'ids: must be stream entry ids (<ms>-<seq>)', { path: 'ids' });
      if (ids.length === 0) return 0;
      const acked = await redis.xack(stream, group, ...ids);
      if (acked === 0) {
        // XACK answers 0 for a group that does not exist: say so.
        const groups = ((await redis.xinfo('GROUPS', stream).catch(() => [])) as unknown[]).map((g) => pairs(g).name);
        if (!groups.includes(group)) throw unknownGroup(new Error('NOGROUP'), group);
      }
      return acked;
    },

    async backlog() {
      return redis.xlen(stream);
    },

    async settle(retention, maxEntries = 10_000) {
      const result: SettleResult = { trimmed: 0, compacted: 0, deleted: 0 };
      const below = await acknowledgedBelow();
      if (below === undefined) return result;
      const classes = [retention.critical, retention.high, retention.normal, retention.low];
      const keepAll = classes.every((r) => r === 'full');
      while (result.trimmed < maxEntries) {
        const entries = (await redis.xrange(stream, '-', `(${below}`, 'COUNT', BATCH)) as Entry[];
        if (entries.length === 0) break;
        if (!keepAll) {
          const pipeline = redis.pipeline();
          const scripted = pipeline as unknown as { sluiceRetain(...args: (string | number)[]): unknown };
          let calls = 0;
          for (const e of decode(entries)) {
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
        // Trimmed after their records: a pass cut off here only does the same again.
        await redis.xtrim(stream, 'MINID', nextId(entries[entries.length - 1]![0]));
        result.trimmed += entries.length;
        if (entries.length < BATCH) break;
      }
      return result;
    },
  };
}
