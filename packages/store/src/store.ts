import type { Redis } from 'ioredis';
import { type FinalState, type Keys, type MessageState, type PriorityClass, type QueuedMessage } from '@sluice/core';
import { defineScripts, type StoreRedis } from './internal/scripts.js';
import { suppressionReason } from './suppressions.js';
import { acceptArgs, finalizeArgs, type FinalizeDetails, type OutcomeDetails } from './record-args.js';

export type { FinalizeDetails, OutcomeDetails } from './record-args.js';

/** What `messages.status(id)` shows: a message's record. */
export interface MessageRecord {
  id: string;
  state: MessageState;
  priority: PriorityClass;
  to: string;
  tenantId: string;
  campaignId: string | undefined;
  /** The intake queue it waits in. */
  queue: string;
  /** Send attempts made (a throttled retry counts). */
  attempts: number;
  /**
   * Attempts submitted in full whose answer was lost (then resent or counted as sent, per
   * `delivery.onAmbiguous`). Above 0 on a final record: a copy may have arrived, whatever
   * the state (`unconfirmed` when no answer ever came; see DESIGN.md, Outcomes).
   */
  ambiguous: number;
  /** The provider's last reply, verbatim. */
  lastReply: string | undefined;
  /** The outcome family of the last reply. */
  lastOutcome: string | undefined;
  provider: string | undefined;
  providerMessageId: string | undefined;
  /** The receiver bucket it was sent under (a policy or organisation name, else its domain). */
  receiver: string | undefined;
  createdAt: number;
  updatedAt: number;
  finalAt: number | undefined;
  /** The last ESP event about it (`delivered`, `bounced_hard`, …; see `@sluice/events`). */
  lastEvent: string | undefined;
  /** When that event happened, epoch ms. */
  lastEventAt: number | undefined;
}

/**
 * Why a waiting message waits, as the scheduler noted it (record fields `heldBy`,
 * `heldKey`, `heldUntil`, `heldReason`), for `explain`.
 */
export interface HeldNote {
  /** The layer or setting that holds it: a quota layer, `override`, `circuit`, `warmup`, `provider`. */
  by: string;
  /** Its key: the layer's name, `<scope>:<name>` of an override, the circuit, the pool. */
  key: string;
  /** Until when it waits (epoch ms). */
  untilMs: number;
  reason: string;
}

/** The record's fields of a {@link HeldNote}. */
const HELD_FIELDS = ['heldBy', 'heldKey', 'heldUntil', 'heldReason'] as const;

/** Result of `transition`. */
export interface TransitionResult {
  /**
   * `moved`; `final` (already final: do nothing); `missing` (no record); `held` (an attempt
   * while its campaign is paused: nothing changed); `skipped` (not in the `from` state).
   */
  result: 'moved' | 'final' | 'missing' | 'held' | 'skipped';
  /** The state before (or the final one). */
  state: string;
  attempts: number;
  /** The previous attempt was submitted in full but never recorded its outcome. */
  ambiguous: boolean;
}

/** Options of {@link createStore}. */
export interface StoreOptions {
  /** A connection of the caller's; not closed by the store. */
  redis: Redis;
  keys: Keys;
  /** How long a final record stays to be looked up. @defaultValue 7 days */
  recordTtlSeconds?: number;
}

/** Message records, final states, suppression and counters. */
export interface Store {
  /** How long a final record stays to be looked up, seconds. */
  readonly recordTtlSeconds: number;
  /** Creates the record of a newly accepted message; `created: false` if the id exists. */
  accept(message: QueuedMessage): Promise<{ created: boolean; state: string }>;
  get(id: string): Promise<MessageRecord | null>;
  /**
   * Moves to a non-final state. `attempt` also counts an attempt, unless the message's
   * campaign (`campaignId`) is paused: then nothing changes and the result is `held`.
   */
  transition(
    id: string,
    state: MessageState,
    options?: {
      attempt?: boolean;
      /** Count an attempt whose answer was lost after it was submitted in full. */
      ambiguous?: boolean;
      /** Move only from this state (or one of these). */
      from?: MessageState | readonly MessageState[];
      campaignId?: string | undefined;
      fields?: Record<string, string>;
    },
  ): Promise<TransitionResult>;
  /**
   * Notes why a waiting message waits (`undefined`: it no longer does), on a record that
   * exists (the scheduler has just read or made it). Values are cut to 60 characters, so
   * the record stays a small listpack.
   */
  noteHeld(id: string, held: HeldNote | undefined): Promise<void>;
  /** Marks a campaign paused or running, for the workers' last check before a send. */
  setCampaignPaused(campaignId: string, paused: boolean): Promise<void>;
  /**
   * Sets the final state exactly once (`ifAmbiguous` instead when the record counts an
   * ambiguous attempt); `false` if it was already final (or, with `from`, not in one of
   * those states).
   */
  finalize(id: string, state: FinalState, details?: FinalizeDetails): Promise<boolean>;
  /** Why an address is suppressed for a tenant (`source: reason`), or null. */
  suppressed(tenantId: string, address: string): Promise<string | null>;
  /** A message's state (null: no record) and its recipient's suppression, in one round trip. */
  peek(id: string, tenantId: string, address: string): Promise<{ state: string | null; suppressed: string | null }>;
  /** A campaign's own limit (rate, burst), read at most every 5 s per campaign. */
  campaignLimit(campaignId: string): Promise<{ id: string; rate: number | undefined; burst: number | undefined }>;
  /** Counters of a campaign (accepted and each final state). */
  campaignCounts(campaignId: string): Promise<Record<'accepted' | FinalState, number>>;
  /** Appends to a message's attempt log (kept as long as its record). */
  logAttempt(id: string, attempt: AttemptEntry): Promise<void>;
  /** A message's attempt log, oldest first. */
  attempts(id: string): Promise<AttemptEntry[]>;
}

/**
 * One send attempt as the attempt log keeps it. Every attempt that was not accepted at
 * once is logged; an accepted first attempt is only in the record (state `sent`, provider
 * message id), which keeps a sent campaign's memory at one small hash per recipient.
 */
export interface AttemptEntry {
  /** Epoch ms when the answer came (or its absence was found). */
  at: number;
  provider: string;
  /**
   * `accepted`, `throttled`, `deferred`, `rejected` or `ambiguous` (submitted in full, no
   * answer: the connection was lost or timed out after the request or the SMTP data, or
   * its worker died after the mark; {@link AttemptEntry.foundSubmitted}).
   */
  outcome: string;
  /** The reply verbatim (cut at 2,000 characters). */
  reply: string;
  /** Reply family, classifier rule and version (absent for accepted and ambiguous). */
  family?: string;
  rule?: string;
  classifier?: string;
  /**
   * An ambiguous attempt whose worker died after submitting it, before the answer: the
   * next attempt found the record `submitted`. `at` is when that was found.
   */
  foundSubmitted?: true;
  /** What was done: `retry in 1200 ms`, `final: rejected`, `resent now (…)`, `final: counted as sent (…)`, … */
  action?: string;
}

const num = (v: string | undefined): number => (v === undefined ? 0 : Number(v));

function toRecord(keys: Keys, id: string, h: Record<string, string>): MessageRecord {
  const priority = h.priority as PriorityClass;
  return {
    id,
    state: h.state as MessageState,
    priority,
    to: h.to ?? '',
    tenantId: h.tenantId ?? 'default',
    campaignId: h.campaignId || undefined,
    queue: h.campaignId ? keys.campaignQueue(h.campaignId) : keys.intakeQueue(priority),
    attempts: num(h.attempts),
    ambiguous: num(h.ambiguous),
    lastReply: h.lastReply,
    lastOutcome: h.lastOutcome,
    provider: h.provider,
    providerMessageId: h.providerMessageId,
    receiver: h.receiver,
    createdAt: num(h.createdAt),
    updatedAt: num(h.updatedAt),
    finalAt: h.finalAt === undefined ? undefined : num(h.finalAt),
    lastEvent: h.event,
    lastEventAt: h.eventAt === undefined ? undefined : num(h.eventAt),
  };
}

/** Creates the record store. Every state change is one Lua call. */
export function createStore(options: StoreOptions): Store {
  const redis: StoreRedis = defineScripts(options.redis);
  const { keys } = options;
  const ttl = options.recordTtlSeconds ?? 7 * 86_400;
  const limits = new Map<
    string,
    { value: { id: string; rate: number | undefined; burst: number | undefined }; at: number }
  >();

  return {
    recordTtlSeconds: ttl,
    async accept(message) {
      const [created, state] = (await redis.sluiceAccept(...acceptArgs(keys, message))) as [number, string];
      return { created: created === 1, state };
    },

    async get(id) {
      const h = await redis.hgetall(keys.message(id));
      return h.state ? toRecord(keys, id, h) : null;
    },

    async transition(id, state, opts = {}) {
      const extra = Object.entries(opts.fields ?? {}).flat();
      const key = keys.message(id);
      const [code, prev, attempts, ambiguous] = (await redis.sluiceTransition(
        key,
        opts.campaignId ? keys.campaign(opts.campaignId) : key,
        state,
        opts.attempt
          ? 'attempt'
          : opts.ambiguous
            ? 'ambiguous'
            : opts.from
              ? `from:${([] as MessageState[]).concat(opts.from).join(',')}`
              : '',
        Date.now(),
        ...extra,
      )) as [number, string, number, number];
      return {
        result: (['missing', 'final', 'moved', 'held', 'skipped'] as const)[code + 1] ?? 'missing',
        state: prev,
        attempts,
        ambiguous: ambiguous === 1,
      };
    },

    async finalize(id, state, d = {}) {
      const [code] = (await redis.sluiceFinalize(...finalizeArgs(keys, ttl, id, state, d, Date.now()))) as [
        number,
        string,
      ];
      return code === 1;
    },

    async noteHeld(id, held) {
      const key = keys.message(id);
      if (held === undefined) {
        await redis.hdel(key, ...HELD_FIELDS);
        return;
      }
      const values = [held.by, held.key, String(Math.round(held.untilMs)), held.reason].map((v) => v.slice(0, 60));
      await redis.hset(key, ...HELD_FIELDS.flatMap((f, i) => [f, values[i]!]));
    },

    async setCampaignPaused(campaignId, paused) {
      if (paused) await redis.hset(keys.campaign(campaignId), 'paused', '1');
      else await redis.hdel(keys.campaign(campaignId), 'paused');
    },

    async suppressed(tenantId, address) {
      return suppressionReason(await redis.hget(keys.suppression(tenantId), address.toLowerCase()));
    },

    async peek(id, tenantId, address) {
      const replies = await redis
        .pipeline()
        .hget(keys.message(id), 'state')
        .hget(keys.suppression(tenantId), address.toLowerCase())
        .exec();
      const value = (i: number): string | null => {
        const [err, v] = replies?.[i] ?? [new Error('no reply'), null];
        if (err) throw err;
        return (v as string | null) ?? null;
      };
      return { state: value(0), suppressed: suppressionReason(value(1)) };
    },

    async campaignLimit(id) {
      const hit = limits.get(id);
      if (hit && Date.now() - hit.at < 5_000) return hit.value;
      const [rate, burst] = await redis.hmget(keys.campaign(id), 'rate', 'burst');
      const value = { id, rate: rate ? Number(rate) : undefined, burst: burst ? Number(burst) : undefined };
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

    async campaignCounts(campaignId) {
      const h = await redis.hgetall(keys.campaign(campaignId));
      return {
        accepted: num(h['n:accepted']),
        sent: num(h['n:sent']),
        rejected: num(h['n:rejected']),
        suppressed: num(h['n:suppressed']),
        expired: num(h['n:expired']),
        cancelled: num(h['n:cancelled']),
        unconfirmed: num(h['n:unconfirmed']),
      };
    },
  };
}
