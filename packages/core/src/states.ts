/**
 * States a message passes through before its final one: `queued` in intake (and once
 * admitted: admission writes no record), `submitted` (the worker's mark before the request's
 * final bytes: the ESP may have it), `retrying` (waiting for another attempt). `dispatched`
 * and `sending` were written before version 2026.12 and are still read as not submitted;
 * `sending` is also where a record found `submitted` after a crash goes before its resend, and
 * where an attempt is counted after a request that ended before its final bytes.
 */
export const ACTIVE_STATES = ['queued', 'dispatched', 'sending', 'submitted', 'retrying'] as const;
/**
 * Every message ends in exactly one of these. `unconfirmed`: at least one attempt was
 * submitted in full and never answered (ambiguous), no later answer accepted or refused
 * it, and its attempts or its lifetime ran out: it may have been delivered, nobody knows.
 * Not a refusal, and not a confirmed send (docs/design/delivery-and-replies.md).
 */
export const FINAL_STATES = ['sent', 'rejected', 'suppressed', 'expired', 'cancelled', 'unconfirmed'] as const;
/** All states of a message record. */
export const MESSAGE_STATES = [...ACTIVE_STATES, ...FINAL_STATES] as const;

/** A final state. */
export type FinalState = (typeof FINAL_STATES)[number];
/** Any state. */
export type MessageState = (typeof MESSAGE_STATES)[number];

/** Whether a state is final. */
export function isFinalState(state: string): state is FinalState {
  return (FINAL_STATES as readonly string[]).includes(state);
}
