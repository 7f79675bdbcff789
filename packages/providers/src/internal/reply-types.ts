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
