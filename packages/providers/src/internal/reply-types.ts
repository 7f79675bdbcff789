/**
 * What the classifier (`classify.ts`) and its rule table (`reply-rules.ts`) both name: kept
 * apart from either, so neither imports the other's types back.
 */
import { REPLY_FAMILIES, type ReplyFamily } from '@sluice/core';

/** Every family a reply can fall in (named in `@sluice/core`, where config gives each its retries). */
export const FAMILIES = REPLY_FAMILIES;
export type Family = ReplyFamily;

/**
 * Whose pace a throttle is about: the provider's (an ESP's 429), the receiver's rate (a 421
 * 4.7.28), the receiver's connections (too many at once: its connection slots are lowered, not
 * its rate), or one recipient's (a mailbox receiving faster than it takes: only that recipient
 * waits).
 */
export type ThrottleScope = 'provider' | 'receiver' | 'connections' | 'recipient';

/**
 * What a reply is about, where the worker and governor act on it: a throttle's scope, or the
 * IP pool (a block-list listing of our addresses: that receiver's circuit for the pool opens).
 */
export type ReplyScope = ThrottleScope | 'pool';

/**
 * One row of the reply classifier's table. A row matches when every condition it sets
 * holds; the first matching row wins, so order is meaning.
 */
export interface ReplyRule {
  /** Stable id, recorded with every attempt: `smtp.rate-text-4xx`, `http.429`… */
  readonly id: string;
  readonly channel?: 'smtp' | 'http';
  /** One status, or an inclusive `[min, max]` range. `0` is "no response at all". */
  readonly status?: number | readonly [number, number];
  /** Tested against the enhanced status code found in the text (`5.1.1`); a row with it needs one. */
  readonly enhanced?: RegExp;
  /** Tested against the normalised text (SMTP: one line, basic codes stripped). */
  readonly text?: RegExp;
  /** The row does not match when the text matches this, whatever else holds. */
  readonly unless?: RegExp;
  /** Tested against the SDK's error name (SES). */
  readonly errorName?: RegExp;
  readonly family: Family;
  readonly permanent: boolean;
  readonly scope?: ReplyScope;
  /** `false`: the provider gave no answer about the message (nothing came back, or its own server failed). */
  readonly answered?: false;
  /**
   * The receiving organisation whose own rule this is (`receiver-rules.ts`): it applies only to
   * replies from it, named by the caller, the answering host or a mark in the text
   * (`classify.ts`).
   */
  readonly receiver?: string;
  /**
   * An SMTP 4xx is never final (RFC 5321 §4.2.1): a permanent row matching one gives its
   * temporary counterpart instead, unless it sets this, for texts that say retrying cannot
   * succeed ("permanently deferred", a bare line feed no retry removes). Decision order 6.
   */
  readonly finalEvenAs4xx?: true;
  /** Where the rule was learned: the published replies it was written for (a URL, `github:owner/repo:path`, an RFC). */
  readonly source: string;
}
