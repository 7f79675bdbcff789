/**
 * The families a reply falls in (the classifier in `@sluice/providers` decides which),
 * named here so config can give each its retry schedule.
 */

/** Families a reply can be in when it is temporary: each has a retry schedule. */
export const TEMPORARY_FAMILIES = [
  'throttled',
  'quota_exhausted',
  'greylisted',
  'reputation_deferral',
  'mailbox_temporary',
  'transient_system',
  // The account, not the message: temporary (a halted account) or permanent (an unverified sender).
  'sender_config',
  'unknown',
] as const;

/**
 * Families that are always permanent: never retried. `mailbox_full` is a full mailbox answered
 * with a 5xx (a 4xx one is `mailbox_temporary`): not retried, and not suppressed on one reply.
 */
export const PERMANENT_FAMILIES = [
  'bad_recipient',
  'bad_domain',
  'policy_block',
  'content_rejected',
  'mailbox_full',
] as const;

/** Every family a reply can fall in. */
export const REPLY_FAMILIES = [...TEMPORARY_FAMILIES, ...PERMANENT_FAMILIES] as const;
/** A reply family. */
export type ReplyFamily = (typeof REPLY_FAMILIES)[number];

/** What can be retried: the temporary families, and an attempt whose answer was lost. */
export const RETRY_FAMILIES = [...TEMPORARY_FAMILIES, 'ambiguous'] as const;
/** A retried family. */
export type RetryFamily = (typeof RETRY_FAMILIES)[number];
