import type { MessageOrigin, MessageState, PriorityClass } from '@sluice/core';

/**
 * Why a waiting message waits, as the scheduler noted it on its record (`noteHeld`), for
 * `explain`.
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
   * the state (`unconfirmed` when no answer ever came; see docs/design/outcomes.md).
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
  /** The API key it came with over HTTP and the address it came from; none for a backend's client. */
  origin?: MessageOrigin;
  /**
   * Only the compact form is left (`delivery.retention: compact`, after every consumer group
   * acknowledged its outcome): no address, reply, attempts or later ESP event.
   */
  compact?: true;
}
