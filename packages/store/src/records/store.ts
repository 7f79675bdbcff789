import type { Redis } from 'ioredis';
import { isFinalState, type FinalState, type Keys, type QueuedMessage } from '@sluice/core';
import { defineScripts, type StoreRedis } from '../redis/scripts.js';
import type { AttemptEntry } from './attempt-entry.js';
import type { HeldNote, MessageRecord } from './message-record.js';
import {
  RECORD_STATE,
  RECORD_SUPPRESSION_CHECK,
  decodeInspection,
  decodeRecord,
  encodeHeld,
  type RecordInspection,
} from './codec.js';
import { COMPACT_STATES, compactSlot, readCompact } from './compact.js';
import { encodeSuppression, suppressionReason } from '../feedback/suppressions.js';
import { acceptArgs, finalSuppression, finalizeManyArgs, type FinalizeDetails } from './args.js';
import { CAMPAIGN_LIMIT, CAMPAIGN_PAUSED } from '../campaigns/codec.js';
import { writePause } from '../campaigns/pause.js';
import { readCampaignCounts, readCampaignFields } from '../campaigns/read.js';
import { readRecordFields } from './read.js';
import { createTransitions, type RecordTransitions } from './transitions.js';
import { acceptResult, applyEventResult, finalizeResults } from '../redis/results.js';

export type { BatchSubmitResult, TransitionResult } from '../redis/results.js';
export type { AttemptOptions, RecordTransitions, RetryMark } from './transitions.js';

export type { FinalizeDetails, OutcomeDetails } from './args.js';

export type { HeldNote, MessageRecord } from './message-record.js';

/** Options of {@link createStore}. */
export interface StoreOptions {
  /** A connection of the caller's; not closed by the store. */
  redis: Redis;
  keys: Keys;
  /** How long a final record stays to be looked up. @defaultValue 7 days */
  recordTtlSeconds?: number;
}

/**
 * Message records, final states, suppression and counters. A record's moves between states
 * that are not final are named ({@link RecordTransitions}); its final state is `finalize`.
 */
export interface Store extends RecordTransitions {
  /** How long a final record stays to be looked up, seconds. */
  readonly recordTtlSeconds: number;
  /** Creates the record of a newly accepted message; `created: false` if the id exists. */
  accept(message: QueuedMessage): Promise<{ created: boolean; state: string }>;
  get(id: string): Promise<MessageRecord | null>;
  /** Whether the message has a full record (ids the client makes: a compacted one is not looked for). */
  exists(id: string): Promise<boolean>;
  /**
   * A full record as `explain` reads it: the record, the scheduler's note, its hop and retry,
   * and every field as stored; null when there is no full record (none, or only its compact
   * form: {@link Store.get} reads that).
   */
  inspect(id: string): Promise<RecordInspection | null>;
  /**
   * Notes why a waiting message waits, on a record that exists (the scheduler has just read
   * or made it). Values are cut to 60 characters, so the record stays a small listpack. The
   * worker's submit mark clears it (`transition-3.lua`), and so does a final state.
   */
  noteHeld(id: string, held: HeldNote): Promise<void>;
  /** Marks a campaign paused or running, for the workers' last check before a send. */
  setCampaignPaused(campaignId: string, paused: boolean): Promise<void>;
  /**
   * Sets the final state exactly once (`ifAmbiguous` instead when the record counts an
   * ambiguous attempt) and publishes it on the outcome stream in the same call; `false` if
   * it was already final (or, with `from`, not in one of those states).
   */
  finalize(id: string, state: FinalState, details?: FinalizeDetails): Promise<boolean>;
  /**
   * `finalize` of a batch's recipients (one home, one campaign) in one script: each `true` if
   * finalized now. The first item's `campaignId`, `from` and `ifAmbiguous` are all of theirs.
   */
  finalizeBatch(state: FinalState, items: readonly { id: string; d: FinalizeDetails }[]): Promise<boolean[]>;
  /** Why an address is suppressed for a tenant (`source: reason`), or null. */
  suppressed(tenantId: string, address: string): Promise<string | null>;
  /**
   * A message's state (null: no record; a compacted one's from its block; `final` for one
   * whose record is gone once acknowledged) and its recipient's suppression, in one round trip.
   */
  peek(id: string, tenantId: string, address: string): Promise<{ state: string | null; suppressed: string | null }>;
  /**
   * A worker's read before a send: the record's state (null: no record) and whether its
   * campaign is paused, side by side, writing nothing. The send's `submit` mark decides
   * atomically; this spares a request that mark would refuse.
   */
  look(id: string, campaignId: string | undefined): Promise<{ state: string | null; paused: boolean }>;
  /** A campaign's own limit (rate, burst), read at most every 5 s per campaign. */
  campaignLimit(campaignId: string): Promise<{ id: string; rate: number | undefined; burst: number | undefined }>;
  /** Counters of a campaign (accepted and each final state). */
  campaignCounts(campaignId: string): Promise<Record<'accepted' | FinalState, number>>;
  /** Appends to a message's attempt log (kept as long as its record). */
  logAttempt(id: string, attempt: AttemptEntry): Promise<void>;
  /** A message's attempt log, oldest first. */
  attempts(id: string): Promise<AttemptEntry[]>;
  /**
   * Keeps a reply the classifier could not read (family `unknown`): the latest 1,000 of the
   * fleet, for an operator to write its rule (`sluice replies unknown`).
   */
  keepUnknownReply(reply: UnknownReply): Promise<void>;
  /**
   * Counts a full-mailbox rejection (family `mailbox_full`) of a tenant's address, once per
   * message, and suppresses the address when `limit.count` fall within `limit.windowMs`.
   * Whether it is suppressed now, and the count in the window.
   */
  countMailboxFull(
    r: { tenantId: string; address: string; messageId: string; provider: string; reply: string },
    limit: { count: number; windowMs: number },
  ): Promise<{ suppressed: boolean; count: number }>;
  /** The latest unknown replies, newest first, of one receiver or all. */
  unknownReplies(options?: { receiver?: string; limit?: number }): Promise<UnknownReply[]>;
}

/** A reply the classifier could not read, with whom it came from. */
export interface UnknownReply {
  at: number;
  receiver: string;
  provider: string;
  reply: string;
  /** The classifier version that read it. */
  version: string;
}

/** How many unknown replies the fleet keeps. */
const UNKNOWN_KEPT = 1_000;

/** Creates the record store. Every state change is one Lua call. */
export function createStore(options: StoreOptions): Store {
  const redis: StoreRedis = defineScripts(options.redis);
  const { keys } = options;
  const ttl = options.recordTtlSeconds ?? 7 * 86_400;
  const limits = new Map<
    string,
    { value: { id: string; rate: number | undefined; burst: number | undefined }; at: number }
  >();

  /**
   * Whether a final state's suppression applies: the record is there and not final, in one of
   * the states it may end from, and has no ambiguous attempt when one would end it otherwise
   * (a copy may have been delivered). The move that follows is the message's own job's.
   */
  async function suppressionApplies(id: string, d: FinalizeDetails): Promise<boolean> {
    const { state, ambiguous } = await readRecordFields(redis, keys, id, RECORD_SUPPRESSION_CHECK);
    if (state === null || isFinalState(state)) return false;
    if (d.from && !(d.from as readonly string[]).includes(state)) return false;
    return !(d.ifAmbiguous && ambiguous > 0);
  }

  /** Ends messages of one home and campaign in `state` in one script; each `true` if finalized now. */
  async function finalizeMany(
    state: FinalState,
    items: readonly { id: string; d: FinalizeDetails }[],
  ): Promise<boolean[]> {
    if (items.length === 0) return [];
    const now = Date.now();
    for (const { id, d } of items) {
      const suppression = finalSuppression(keys, d, now);
      // Under the tenant's tag, so before the record's move (its home) and outside its script: a
      // crash between the two leaves the message's job to run again, and the entry is rewritten.
      if (suppression && (await suppressionApplies(id, d))) {
        await redis.hset(suppression.key, suppression.address, suppression.entry);
      }
    }
    const done = finalizeResults(await redis.sluiceFinalize(...finalizeManyArgs(keys, ttl, state, items, now)));
    return done.map((r) => r.result === 'finalized');
  }

  return {
    ...createTransitions(redis, keys),
    recordTtlSeconds: ttl,
    async accept(message) {
      return acceptResult(await redis.sluiceAccept(...acceptArgs(keys, message)));
    },

    async get(id) {
      return decodeRecord(keys, id, await redis.hgetall(keys.message(id))) ?? readCompact(redis, keys, id);
    },

    async exists(id) {
      return (await redis.exists(keys.message(id))) === 1;
    },

    async inspect(id) {
      return decodeInspection(keys, id, await redis.hgetall(keys.message(id)));
    },

    async finalize(id, state, d = {}) {
      const [done] = await finalizeMany(state, [{ id, d }]);
      return done === true;
    },

    finalizeBatch: (state, items) => finalizeMany(state, items),

    async noteHeld(id, held) {
      await redis.hset(keys.message(id), ...encodeHeld(held));
    },

    async setCampaignPaused(campaignId, paused) {
      await writePause(redis, keys, campaignId, paused);
    },

    async suppressed(tenantId, address) {
      return suppressionReason(await redis.hget(keys.suppression(tenantId), address.toLowerCase()));
    },

    async peek(id, tenantId, address) {
      const compact = compactSlot(keys, id);
      // Commands side by side, not a pipeline: ioredis copies every script defined on the
      // connection (BullMQ's among them) into each pipeline it makes, ~85 µs a pipeline here.
      const [state, suppressed, slot, gone] = await Promise.all([
        readRecordFields(redis, keys, id, RECORD_STATE),
        redis.hget(keys.suppression(tenantId), address.toLowerCase()),
        // A record compacted or gone once acknowledged (delivery.retention) is still final.
        compact ? redis.hget(compact.key, compact.field) : null,
        compact ? redis.getbit(compact.gone, compact.bit) : 0,
      ]);
      const final = compact ? (COMPACT_STATES[slot?.[0] ?? ''] ?? (gone === 1 ? 'final' : null)) : null;
      return { state: state ?? final, suppressed: suppressionReason(suppressed) };
    },

    async look(id, campaignId) {
      const [state, paused] = await Promise.all([
        readRecordFields(redis, keys, id, RECORD_STATE),
        campaignId !== undefined ? readCampaignFields(redis, keys, campaignId, CAMPAIGN_PAUSED) : false,
      ]);
      return { state, paused };
    },

    async campaignLimit(id) {
      const hit = limits.get(id);
      if (hit && Date.now() - hit.at < 5_000) return hit.value;
      const value = { id, ...(await readCampaignFields(redis, keys, id, CAMPAIGN_LIMIT)) };
      limits.set(id, { value, at: Date.now() });
      return value;
    },

    async logAttempt(id, attempt) {
      const key = keys.attempts(id);
      await redis
        .multi()
        .rpush(key, JSON.stringify({ ...attempt, reply: attempt.reply.slice(0, 2000) }))
        .ltrim(key, -100, -1)
        .expire(key, ttl)
        .exec();
    },

    async attempts(id) {
      const entries = await redis.lrange(keys.attempts(id), 0, -1);
      return entries.map((e) => JSON.parse(e) as AttemptEntry);
    },

    async countMailboxFull(r, limit) {
      const address = r.address.toLowerCase();
      const at = Date.now();
      const supKey = keys.suppression(r.tenantId);
      const entry = encodeSuppression({
        source: 'mailbox-full',
        at,
        provider: r.provider,
        reason: `${limit.count} full-mailbox rejections, last: ${r.reply}`,
      });
      // The soft-bounce counter of apply-event-3 with a message's id as the member: a replayed
      // settle counts the same rejection once.
      const { result, softBounces } = applyEventResult(
        await redis.sluiceApplyEvent(
          supKey,
          supKey,
          keys.mailboxFull(r.tenantId, address),
          1,
          'soft',
          address,
          entry,
          at,
          at,
          limit.windowMs,
          limit.count,
          r.messageId,
        ),
      );
      return { suppressed: result === 'suppressed' || result === 'alreadySuppressed', count: softBounces };
    },

    async keepUnknownReply(r) {
      const entry = JSON.stringify({ ...r, reply: r.reply.slice(0, 1_000) });
      await redis.xadd(keys.unknownReplies(), 'MAXLEN', '~', UNKNOWN_KEPT, '*', 'r', entry);
    },

    async unknownReplies(options = {}) {
      const limit = options.limit ?? 20;
      const out: UnknownReply[] = [];
      // Newest first, a page at a time, until enough of the receiver's are found.
      let end = '+';
      for (let pages = 0; out.length < limit && pages < UNKNOWN_KEPT / 100; pages++) {
        const page = await redis.xrevrange(keys.unknownReplies(), end, '-', 'COUNT', 100);
        for (const [, fields] of page) {
          const r = JSON.parse(fields[1] ?? '{}') as UnknownReply;
          if (options.receiver === undefined || r.receiver === options.receiver) out.push(r);
          if (out.length === limit) break;
        }
        if (page.length < 100) break;
        end = `(${page[page.length - 1]![0]}`;
      }
      return out;
    },

    campaignCounts: (campaignId) => readCampaignCounts(redis, keys, campaignId),
  };
}
