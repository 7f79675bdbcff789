/**
 * What the classifier (`classify.ts`) and its rule table (`reply-rules.ts`) both name: kept
 * apart from either, so neither imports the other's types back.
 */
import { REPLY_FAMILIES, type ReplyFamily } from '@sluice/core';

/** Every family a reply can fall in (named in `@sluice/core`, where config gives each its retries). */
export const FAMILIES = REPLY_FAMILIES;
export type Family = ReplyFamily;

/** Whose rate a throttle lowers. */
export type ThrottleScope = 'provider' | 'receiver';
