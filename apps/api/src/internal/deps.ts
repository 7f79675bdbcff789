import type { Redis } from 'ioredis';
import { recipientDomain, type Keys, type ServiceLogger, type SluiceConfig } from '@sluice/core';
import type { DeliveryEvent, DeliveryEventKind, EventWindow } from '@sluice/events';
import type { ApplyResult, Feedback, Store } from '@sluice/store';
import type { SignalField, SignalKey, Signals } from '@sluice/throttle';

/** What the webhook routes share. */
export interface WebhookDeps {
  config: SluiceConfig['api']['webhooks'];
  logger: ServiceLogger;
  redis: Redis;
  keys: Keys;
  feedback: Feedback;
  /** Reads the record of the message an event names, for the keys its signals count under. */
  store: Store;
  signals: Signals;
  /** The pool of each provider, as the workers count it. */
  poolOf(provider: string): string;
  /** The receiver bucket of a recipient domain by config (policies that list domains). */
  receiverOf(domain: string): string;
  /** How long an event's signal is remembered as counted: as long as the event itself. */
  dedupeTtlSeconds: number;
  /**
   * The event times taken now: no older than the feedback's dedupe memory (an older event
   * could be a replay it forgot), no further ahead than the signature window's skew.
   */
  eventWindow(): EventWindow;
}

/** The most bytes of one request to the Mailgun and SES routes (one event each; SNS messages are at most 256 KiB). */
export const BODY_LIMIT = 1024 * 1024;

/** What a webhook answers once its events are applied. */
export interface Applied {
  events: number;
  duplicates: number;
  suppressed: number;
}

// What the ESPs report later that a governor rule reads next to the send outcomes.
const SIGNALLED: Partial<Record<DeliveryEventKind, SignalField>> = {
  bounced_hard: 'bounced_hard',
  bounced_soft: 'bounced_soft',
  complained: 'complained',
};

/**
 * Counts a bounce or complaint for the keys its message was sent under, read from the
 * message's record: the provider that took it, the pool, the receiver it was sent under,
 * the campaign and the tenant.
 * An event that names no message of ours, or one whose record has expired, counts nowhere:
 * without the provider it would mislead more than it tells.
 * Counted in Redis before the answer, once per event (`countOnce`): an api killed after
 * applying an event but before counting it counts it on the ESP's redelivery, and one
 * killed after counting it does not count it again.
 */
async function countSignal(deps: WebhookDeps, event: DeliveryEvent): Promise<void> {
  const field = SIGNALLED[event.kind];
  if (field === undefined || event.messageId === undefined) return;
  const record = await deps.store.get(event.messageId);
  if (record?.provider === undefined) return;
  // The receiver the attempts counted under (the record keeps it once sent), so a rule's
  // ratio of bounces to attempts compares the same key.
  const receiver = record.receiver ?? deps.receiverOf(recipientDomain(record.to || event.recipient));
  const on: SignalKey[] = [
    { kind: 'provider', name: record.provider },
    { kind: 'pool', name: deps.poolOf(record.provider) },
    { kind: 'receiver', name: receiver },
    { kind: 'tenant', name: record.tenantId },
  ];
  if (record.campaignId !== undefined) on.push({ kind: 'campaign', name: record.campaignId });
  await deps.signals.countOnce(
    deps.keys.feedbackSignal(event.provider, event.eventId),
    deps.dedupeTtlSeconds,
    on,
    field,
  );
}

/**
 * Applies events in order and counts what happened, for the answer and the log. An event
 * that bounces or complains is also a signal, counted once however often the ESP sends it:
 * a duplicate (the ESP's retry) is counted only if its first delivery never got that far.
 * An event for a message id Sluice has no record of (never sent through Sluice, or its
 * record expired) still suppresses: a verified hard bounce, complaint or unsubscribe is the
 * ESP's word about the address, as each ESP's own account-wide suppression list takes it
 * (SES adds an address "when a message sent to that address results in a hard bounce",
 * whoever sent it), and complaints arrive days after the send, often after the record's
 * TTL. It only writes no signal, having no provider to count it under. The same for SES,
 * SendGrid and Mailgun. Writes are bounded by the routes: at most one dedupe key and one
 * soft-bounce set per event (and a counted-signal marker for one that bounces or complains), and the routes cap the events a request may carry.
 */
export async function applyAll(deps: WebhookDeps, events: readonly DeliveryEvent[]): Promise<Applied> {
  const out: Applied = { events: events.length, duplicates: 0, suppressed: 0 };
  for (const e of events) {
    const r: ApplyResult = await deps.feedback.apply(e);
    if (r.outcome === 'duplicate') out.duplicates++;
    await countSignal(deps, e);
    if (r.outcome === 'suppressed') out.suppressed++;
  }
  return out;
}
