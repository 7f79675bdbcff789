import { z } from 'zod';
import { RETRY_FAMILIES, type RetryFamily } from './families.js';
import { perClass } from './config-fields.js';

/** What is kept of a record once its outcome is acknowledged (`delivery.retention`). */
export const RETENTIONS = ['full', 'compact', 'until-acknowledged'] as const;
/** One class's retention. */
export type Retention = (typeof RETENTIONS)[number];

// How a message is delivered and what its replies do: attempts and retries, the throttle's
// back-pressure, suppression, and the processes that admit and send.

const retryScheduleSchema = z.strictObject({
  /** The first retry's wait; each next one doubles, with jitter. */
  baseMs: z.number().int().positive(),
  /** The longest wait between two attempts. */
  maxMs: z.number().int().positive(),
  /** Attempts that end in this family before the message ends (`rejected`, or `unconfirmed` when ambiguous). */
  maxAttempts: z.number().int().min(1).max(100),
});
/** How one family is retried. */
export type RetrySchedule = z.output<typeof retryScheduleSchema>;

/**
 * Default schedules. Throttles come back soon (the key's rate is lowered meanwhile);
 * greylisting wants a few minutes (Postgrey's default delay is 300 s); a reputation
 * deferral or a full mailbox does not clear in seconds; `unknown` is temporary with a low
 * cap, so a misread permanent failure is not retried for days.
 */
export const RETRY_DEFAULTS: Readonly<Record<RetryFamily, RetrySchedule>> = {
  throttled: { baseMs: 1_000, maxMs: 60_000, maxAttempts: 30 },
  // The provider is paused meanwhile, so admission holds the message (or routes it to
  // another provider): its own wait can be short.
  quota_exhausted: { baseMs: 1_000, maxMs: 60_000, maxAttempts: 48 },
  greylisted: { baseMs: 300_000, maxMs: 1_800_000, maxAttempts: 5 },
  reputation_deferral: { baseMs: 300_000, maxMs: 3_600_000, maxAttempts: 8 },
  mailbox_temporary: { baseMs: 600_000, maxMs: 4 * 3_600_000, maxAttempts: 6 },
  transient_system: { baseMs: 1_000, maxMs: 600_000, maxAttempts: 8 },
  sender_config: { baseMs: 60_000, maxMs: 600_000, maxAttempts: 10 },
  unknown: { baseMs: 30_000, maxMs: 600_000, maxAttempts: 3 },
  ambiguous: { baseMs: 5_000, maxMs: 60_000, maxAttempts: 3 },
};

/** How messages are delivered: attempts, retry schedules per family, lifetimes, ambiguous sends, records. */
export const deliverySchema = z
  .strictObject({
    /** Attempts of one message, over every family: the ceiling above the per-family caps. */
    maxAttempts: z.number().int().min(1).max(100).default(12),
    /**
     * Retry schedule per reply family (see `RETRY_DEFAULTS`): exponential backoff with
     * jitter from `baseMs`, capped at `maxMs`; the `maxAttempts`-th failure of that
     * family is the last. A reply's own hint (Retry-After…) wins when longer. Permanent families
     * are never retried, whatever is set here.
     */
    retry: z
      .partialRecord(z.enum(RETRY_FAMILIES), retryScheduleSchema.partial())
      .default({})
      .transform((given) => {
        const out = {} as Record<RetryFamily, RetrySchedule>;
        for (const f of RETRY_FAMILIES) out[f] = { ...RETRY_DEFAULTS[f], ...given[f] };
        return out;
      }),
    /**
     * How long a recipient's mail waits after it answered that it receives faster than its
     * mailbox takes (Gmail's `450 4.2.1`: a reply of scope `recipient`), unless the reply
     * names a longer wait. Its other messages wait too, without an attempt; other recipients
     * are not slowed.
     */
    recipientHoldMs: z.number().int().min(0).max(86_400_000).default(60_000),
    lifetimeMs: perClass(z.number().int().positive()).default({
      critical: 15 * 60_000,
      high: 60 * 60_000,
      normal: 24 * 3_600_000,
      low: 72 * 3_600_000,
    }),
    /**
     * A request that went out in full but whose answer was lost (its worker died, the
     * connection broke) may have been accepted: resend it (same Message-ID; an OTP must
     * arrive) or count it as sent (a newsletter must not arrive twice).
     */
    onAmbiguous: perClass(z.enum(['resend', 'assume-sent'])).default({
      critical: 'resend',
      high: 'resend',
      normal: 'assume-sent',
      low: 'assume-sent',
    }),
    /** How long a message's record stays after its final state (then it expires). */
    recordTtlSeconds: z
      .number()
      .int()
      .positive()
      .default(7 * 86_400),
    /**
     * What is left of a message's record once its outcome is acknowledged by every consumer
     * group of the outcome stream (at once when there is none), until `recordTtlSeconds`:
     * `full` the whole record; `compact` state, provider, provider message id and time (an
     * injected campaign message then costs under 128 B; no address, no reply); and
     * `until-acknowledged` nothing. A failure (`rejected`, `expired`, `unconfirmed`) keeps its
     * full record and reply whatever is set here, and so does any message of no campaign
     * (transactional mail). Campaign classes default to `compact`:
     * ten million full records are gigabytes; transactional mail stays `full` for support.
     * @defaultValue `{ critical: 'full', high: 'full', normal: 'compact', low: 'compact' }`
     */
    retention: perClass(z.enum(RETENTIONS)).default({
      critical: 'full',
      high: 'full',
      normal: 'compact',
      low: 'compact',
    }),
  })
  .prefault({});

/** The outcome stream backends consume (`client.outcomes`; docs/design/outcomes.md). */
export const outcomesSchema = z
  .strictObject({
    /**
     * Events not yet acknowledged by every consumer group past which injection waits: a
     * consumer that falls behind slows campaigns down instead of losing events. An event
     * costs about 150 B while kept (a 60-character provider id), so the default bounds the
     * stream near 37 MB, within a 1M campaign's 100 MB budget.
     * @defaultValue `250_000`
     */
    maxBacklog: z.number().int().positive().default(250_000),
    /**
     * How many events a tenant's consumer group (made over HTTP) may fall behind and still hold
     * the stream. Beyond it the group stops holding: the events it has not read are trimmed as
     * the fleet's own groups acknowledge them, so one tenant's abandoned group can neither fill
     * Redis nor hold every campaign's injection. Below `maxBacklog`.
     * @defaultValue `50_000`
     */
    tenantHold: z.number().int().positive().default(50_000),
  })
  .refine((o) => o.tenantHold < o.maxBacklog, { path: ['tenantHold'], message: 'must be below maxBacklog' })
  .prefault({});

/**
 * A throttle (HTTP 429, SMTP 421 4.7.28…) lowers that key's effective rate for a while:
 * the provider's for a provider's throttle, the receiver's for a receiver's.
 */
export const backpressureSchema = z
  .strictObject({
    /** Each throttle multiplies the key's rate by this (at most once per `cooldownMs`). */
    factor: z.number().gt(0).lt(1).default(0.5),
    /** Never below this share of the configured rate. */
    minFactor: z.number().gt(0).max(1).default(0.05),
    /** Throttles closer together than this count as one (the answers of one burst). */
    cooldownMs: z.number().int().min(0).default(2_000),
    /** The lowered rate holds this long after the last throttle, then doubles every `holdMs` back to full. */
    holdMs: z.number().int().positive().default(30_000),
  })
  .prefault({});

/** Replies that suppress an address once `count` of them fall within `windowMs` (3 by default). */
const countWithin = (windowMs: number) =>
  z
    .strictObject({
      /** How many such replies suppress the address. */
      count: z.number().int().min(1).max(1000).default(3),
      /** Within how long they must fall. */
      windowMs: z.number().int().positive().default(windowMs),
    })
    .prefault({});

/** Suppression from delivery feedback (ESP webhooks) and full mailboxes. */
export const suppressionSchema = z
  .strictObject({
    /**
     * Soft bounces (a temporary failure the ESP gave up on) of one address suppress it
     * once `count` of them fall within `windowMs`: one full mailbox is not a dead one.
     */
    softBounces: countWithin(7 * 86_400_000),
    /**
     * A full mailbox answered with a 5xx (family `mailbox_full`) is not retried; the address is
     * suppressed once `count` of them fall within `windowMs` (one full mailbox empties; one full
     * for a month is abandoned).
     */
    mailboxFull: countWithin(30 * 86_400_000),
  })
  .prefault({});

/** The scheduler processes (`apps/scheduler`). */
export const schedulerSchema = z
  .strictObject({
    /** Campaign and intake jobs one scheduler process admits at once. */
    concurrency: z.number().int().positive().default(16),
  })
  .prefault({});

/**
 * Batches (docs/design/batches.md): campaign recipients admitted for one provider that supports
 * them, one class (normal or low) and one message home, moved to the workers in one dispatch job
 * and sent in one ESP call. Every recipient is still admitted, placed at the arrival gate and
 * settled on its own.
 */
export const batchesSchema = z
  .strictObject({
    /** Whether campaign mail of the normal and low classes goes in batches. @defaultValue `true` */
    enabled: z.boolean().default(true),
    /** The most recipients in one batch (an ESP's own limit may be lower: SES takes 50). @defaultValue `50` */
    maxSize: z.number().int().min(2).max(1_000).default(50),
    /**
     * How long the scheduler waits for a batch to fill before it goes with fewer. Only mail that
     * can wait is batched: critical and high mail never is. @defaultValue `20`
     */
    fillMs: z.number().int().min(0).max(1_000).default(20),
    /**
     * The most time between the first and the last booked slot of one batch: a batch goes at its
     * first slot, so no recipient goes earlier than its own by more than this (the arrival gate
     * still holds every layer to rate + burst). @defaultValue `100`
     */
    spreadMs: z.number().int().min(0).max(1_000).default(100),
    /**
     * How far ahead an idle reserve is lent to batched campaign mail (at most
     * `reserves.lendAheadMs`). A block's recipients ask side by side and come back together when
     * a reserve is lendable, so they take every slot lending allows each time: a critical
     * message behind a saturating batched campaign waits about this long. A reserve whose one
     * slot takes longer than this (a slow layer with a small burst) is not lent to batched
     * mail. @defaultValue `100`
     */
    lendAheadMs: z.number().int().min(0).max(1_000).default(100),
  })
  .prefault({});

/**
 * How much of a campaign injection keeps in Redis (`campaigns.inject`; docs/design/campaigns.md).
 * The scheduler measures each campaign's admitted rate and writes its window; the producer
 * waits while the campaign has more recipients not yet taken by admission than `aheadMs` of
 * that rate (at least `minWindow`), or more not yet final than `maxWindow`.
 */
export const injectionSchema = z
  .strictObject({
    /** How far ahead of admission recipients are injected, at the campaign's admitted rate. @defaultValue `20000` */
    aheadMs: z.number().int().positive().default(20_000),
    /** The least the window holds (no rate measured yet, or a slow one). @defaultValue `2000` */
    minWindow: z.number().int().positive().default(2_000),
    /**
     * The most recipients of one campaign not yet final: the bound a receiver that is slow
     * or cut may fill before injection waits for it (about 1 KB of Redis each). @defaultValue `50000`
     */
    maxWindow: z.number().int().positive().default(50_000),
  })
  .refine((w) => w.minWindow <= w.maxWindow, { path: ['minWindow'], message: 'must be at most maxWindow' })
  .prefault({});

/** The worker processes (`apps/worker`). */
export const workerSchema = z
  .strictObject({
    /** Messages one worker process sends at once, per class (each class has its own dispatch queue). */
    concurrency: perClass(z.number().int().positive()).default({ critical: 4, high: 4, normal: 8, low: 8 }),
    /** On SIGTERM, how long in-flight sends may take to finish before the worker exits anyway. */
    drainTimeoutMs: z.number().int().positive().default(30_000),
    /**
     * How long a worker waits, holding its connection slot, for room to send at every layer
     * a provider or receiver counts arrivals at (provider, receiver, IP pool: at most rate +
     * burst in any second, late messages and on-time ones together). When the room is
     * further away than this (a backlog of missed slots after a stall, or a rate just
     * lowered), the message asks admission again and waits in its queue for a later slot.
     * @defaultValue `250`
     */
    lateAfterMs: z.number().int().positive().default(250),
    /**
     * How long a worker's hold (BullMQ's lock) on a message it is sending lasts; a live
     * worker renews it every half of this, however long the send takes. A killed worker
     * (SIGKILL, a lost host) renews nothing, so its messages wait until the hold runs out,
     * 30 s by default, and are taken by another worker at its next `stalledIntervalMs`
     * check: what the message's record says then decides whether it is sent again
     * (`delivery.onAmbiguous`). The scheduler's jobs hold theirs as long.
     * @defaultValue `30_000`
     */
    lockDurationMs: z.number().int().positive().default(30_000),
    /**
     * How often every worker (and scheduler) looks for messages whose hold ran out, a killed
     * process's, and takes them back: a killed worker's messages wait at most
     * `lockDurationMs + stalledIntervalMs` (a minute by default) before another takes them.
     * @defaultValue `30_000`
     */
    stalledIntervalMs: z.number().int().positive().default(30_000),
    /** The watchdog of every worker's and scheduler's BullMQ Workers. */
    watchdog: z
      .strictObject({
        /**
         * How long a BullMQ Worker's blocking connection (the one it waits for jobs on) may stay
         * not ready before the Worker is closed and made again. On a Redis Cluster a Worker's
         * blocking client can stay wedged after a failover, fetching nothing ever again; a
         * failover takes seconds, so the default is a few times that. The messages it held run
         * again once their hold (`lockDurationMs`) runs out. `0` turns the watchdog off.
         * @defaultValue `30_000`
         */
        notReadyMs: z.number().int().nonnegative().default(30_000),
      })
      .prefault({}),
  })
  .prefault({});
