import type { Redis } from 'ioredis';
import type { Keys } from '@sluice/core';
import type { DeliveryEvent, DeliveryEventKind } from '@sluice/events';
import { defineScripts, type StoreRedis } from '../redis/scripts.js';
import { encodeSuppression, type SuppressionSource } from './suppressions.js';
import { noteEvent } from '../records/event-note.js';
import { readRecordTenant } from '../records/read.js';
import { applyEventResult } from '../redis/results.js';

/** Options of {@link createFeedback}. */
export interface FeedbackOptions {
  /** A connection of the caller's; not closed here. */
  redis: Redis;
  keys: Keys;
  /** `suppression.softBounces` of the config. @defaultValue `{ count: 3, windowMs: 7 days }` */
  softBounces?: { count: number; windowMs: number } | undefined;
  /**
   * How long an applied event is remembered, so the ESP's retries of it count once. Longer
   * than any ESP retries (SendGrid up to about 24 h, Mailgun about 8 h). @defaultValue 2 days
   */
  dedupeTtlSeconds?: number | undefined;
  /** The clock, epoch ms (tests move it). @defaultValue `Date.now` */
  now?: (() => number) | undefined;
}

/** What applying an event did. */
export interface ApplyResult {
  /**
   * `duplicate`: seen before, nothing changed; `recorded`: only the message's record (or
   * nothing) changed; `counted`: a soft bounce below the threshold; `suppressed`: the address
   * is suppressed now; `already_suppressed`: it was before.
   */
  outcome: 'duplicate' | 'recorded' | 'counted' | 'suppressed' | 'already_suppressed';
  tenantId: string;
  /** Soft bounces of the address in the window, for a soft bounce. */
  softBounces?: number;
}

/** Applies ESP events. */
export interface Feedback {
  apply(event: DeliveryEvent): Promise<ApplyResult>;
}

const SUPPRESSING: Partial<Record<DeliveryEventKind, SuppressionSource>> = {
  bounced_hard: 'bounce',
  complained: 'complaint',
  unsubscribed: 'unsubscribe',
};

// Short record values (the record stays a listpack: values under 64 bytes).
const RECORD_KIND: Record<DeliveryEventKind, string> = {
  delivered: 'delivered',
  deferred: 'deferred',
  bounced_hard: 'bounced_hard',
  bounced_soft: 'bounced_soft',
  complained: 'complained',
  unsubscribed: 'unsubscribed',
  blocked: 'blocked',
  dropped: 'dropped',
};

/** What each result of apply-event-3.lua is called here (a soft bounce applied is `counted`). */
const OUTCOMES = {
  duplicate: 'duplicate',
  applied: 'recorded',
  suppressed: 'suppressed',
  alreadySuppressed: 'already_suppressed',
} as const;

/**
 * Turns normalised ESP events into suppression and history, one Lua call per event.
 *
 * It lives in the store because it writes what the store owns and others read: the
 * suppression hash the scheduler's first check reads (in the entry format `finalize`
 * writes too) and the message record. It takes events already verified and normalised
 * (`@sluice/events`), so webhooks, a CLI import or a test feed it the same way.
 *
 * Idempotent: an event that suppresses or counts is remembered by `eventId` (SET NX with a
 * TTL, in the same script, under the tenant's hash tag), so an ESP's retry changes nothing.
 * The record's last event is set after it (the record is in the message's home), and only
 * when newer than the one it shows, which a retry cannot
 * change either; they write no dedupe key, which would cost memory for every delivery.
 */
export function createFeedback(options: FeedbackOptions): Feedback {
  const redis: StoreRedis = defineScripts(options.redis);
  const { keys } = options;
  const soft = options.softBounces ?? { count: 3, windowMs: 7 * 86_400_000 };
  const ttl = options.dedupeTtlSeconds ?? 2 * 86_400;
  const now = options.now ?? Date.now;

  async function tenantOf(event: DeliveryEvent): Promise<string> {
    if (event.tenantId) return event.tenantId;
    if (event.messageId) return readRecordTenant(redis, keys, event.messageId);
    return 'default';
  }

  return {
    async apply(event) {
      const tenantId = await tenantOf(event);
      const address = event.recipient.toLowerCase();
      const source = SUPPRESSING[event.kind];
      const action = source ? 'suppress' : event.kind === 'bounced_soft' ? 'soft' : 'none';
      const supKey = keys.suppression(tenantId);
      const reason =
        event.enhanced && !event.reason.includes(event.enhanced) ? `${event.enhanced} ${event.reason}` : event.reason;
      const entry = encodeSuppression({
        source: source ?? 'soft-bounces',
        at: now(),
        provider: event.provider,
        reason: action === 'soft' ? `${soft.count} soft bounces, last: ${reason || event.kind}` : reason || event.kind,
      });
      const applied = applyEventResult(
        await redis.sluiceApplyEvent(
          action === 'none' ? supKey : keys.feedbackEvent(tenantId, event.provider, event.eventId),
          supKey,
          action === 'soft' ? keys.softBounces(tenantId, address) : supKey,
          ttl,
          action,
          address,
          entry,
          event.at,
          now(),
          soft.windowMs,
          soft.count,
          event.eventId,
        ),
      );
      // In the message's home, after the tenant's part and whatever it found (a duplicate too).
      const kind = RECORD_KIND[event.kind];
      if (kind !== '' && event.messageId) await noteEvent(redis, keys, event.messageId, kind, event.at);
      // The suppression feed's freshness, per provider (a launch is held while it is stale): the
      // newest event time it carried, so the ESP's retry of a request writes nothing new.
      await redis.sluiceFeedSeen(keys.feedApplied(), event.provider, Math.min(event.at, now()));
      const outcome = applied.result === 'applied' && action === 'soft' ? 'counted' : OUTCOMES[applied.result];
      return action === 'soft' && applied.result !== 'duplicate'
        ? { outcome, tenantId, softBounces: applied.softBounces }
        : { outcome, tenantId };
    },
  };
}
