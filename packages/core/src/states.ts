/**
 * States a message passes through before its final one: `queued` in intake, `dispatched`
 * (admitted), `sending` (an attempt started), `submitted` (the request is out in full, so
 * the ESP may have it), `retrying` (waiting for another attempt).
 */
export const ACTIVE_STATES = ['queued', 'dispatched', 'sending', 'submitted', 'retrying'] as const;
/**
 * Every message ends in exactly one of these. `unconfirmed`: at least one attempt was
 * submitted in full and never answered (ambiguous), no later answer accepted or refused
 * it, and its attempts or its lifetime ran out: it may have been delivered, nobody knows.
 * Not a refusal, and not a confirmed send (DESIGN.md, Outcomes).
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
