/**
 * What an ESP's event means for Sluice. A deliberately small set: each kind is one that
 * changes what Sluice does, or that a user asks about.
 *
 * - `delivered`: the receiving server accepted the message.
 * - `deferred`: a temporary failure the ESP keeps retrying (informational; not counted).
 * - `bounced_hard`: a permanent failure about the recipient: suppresses the address.
 * - `bounced_soft`: a temporary failure the ESP gave up on (SES `Transient` after its
 *   retries, Mailgun `reason: old`): counted; suppresses after `suppression.softBounces.count`.
 * - `complained`: a spam report from a feedback loop: suppresses.
 * - `unsubscribed`: the recipient unsubscribed through the ESP: suppresses.
 * - `blocked`: refused for reputation, content or policy (SendGrid `type: blocked`): the
 *   address is fine, so it does not suppress; the rate is the governor's to watch.
 * - `dropped`: the ESP did not send at all (its own suppression list, invalid address):
 *   informational, since the ESP already refuses that address.
 */
export const DELIVERY_EVENT_KINDS = [
  'delivered',
  'deferred',
  'bounced_hard',
  'bounced_soft',
  'complained',
  'unsubscribed',
  'blocked',
  'dropped',
] as const;

/** One kind of {@link DELIVERY_EVENT_KINDS}. */
export type DeliveryEventKind = (typeof DELIVERY_EVENT_KINDS)[number];

/** The ESPs whose webhooks Sluice reads. */
export type EventProvider = 'ses' | 'sendgrid' | 'mailgun';

/** One recipient's event, normalised from any ESP. */
export interface DeliveryEvent {
  provider: EventProvider;
  kind: DeliveryEventKind;
  /** Our message id (`sluice_id`), when the ESP echoed it back. */
  messageId?: string | undefined;
  tenantId?: string | undefined;
  campaignId?: string | undefined;
  /** The ESP's own id of the message. */
  providerMessageId?: string | undefined;
  /** The address, lower-cased. */
  recipient: string;
  /** When the ESP says it happened, epoch ms. */
  at: number;
  /** Diagnostic text: the receiver's reply or the ESP's reason (may be empty). */
  reason: string;
  /** RFC 3463 enhanced status code, when given (`5.1.1`). */
  enhanced?: string | undefined;
  /**
   * Stable across the ESP's retries of the same event, so applying it twice does nothing:
   * SES `feedbackId` (else the SNS `MessageId`) plus the recipient; SendGrid `sg_event_id`;
   * Mailgun `id@timestamp` (Mailgun ids are unique only per day).
   */
  eventId: string;
}
