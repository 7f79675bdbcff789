import { createPublicKey, verify as verifySignature, type KeyObject } from 'node:crypto';
import type { DeliveryEvent, DeliveryEventKind } from './event.js';
import { cleanAddress, cleanId, enhancedCode, eventTime, isObject, text, type EventWindow } from './internal/fields.js';
import { badField, fail, fresh } from './internal/fail.js';
import type { VerifyResult } from './verify-result.js';

/** The headers of SendGrid's signed Event Webhook. */
export const SENDGRID_SIGNATURE_HEADER = 'x-twilio-email-event-webhook-signature';
/** See {@link SENDGRID_SIGNATURE_HEADER}. */
export const SENDGRID_TIMESTAMP_HEADER = 'x-twilio-email-event-webhook-timestamp';

/**
 * Reads SendGrid's verification key: the base64 SPKI DER the SendGrid UI shows
 * (`MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE…`) or a PEM. Throws if it is not a P-256 key, so a
 * bad key fails at start, not on the first event.
 */
export function sendgridPublicKey(publicKeyB64OrPem: string): KeyObject {
  const key = publicKeyB64OrPem.includes('-----BEGIN')
    ? createPublicKey(publicKeyB64OrPem)
    : createPublicKey({ key: Buffer.from(publicKeyB64OrPem.trim(), 'base64'), format: 'der', type: 'spki' });
  if (key.asymmetricKeyType !== 'ec' || key.asymmetricKeyDetails?.namedCurve !== 'prime256v1') {
    throw new Error('the SendGrid webhook key must be an EC P-256 public key');
  }
  return key;
}

/** Options of {@link verifySendgridSignature}. */
export interface FreshnessOptions {
  /** The clock, epoch ms. @defaultValue `Date.now()` */
  now?: number | undefined;
  /** Signed timestamps further than this from now are refused. @defaultValue `300` */
  maxAgeSeconds?: number | undefined;
}

/**
 * Verifies SendGrid's signed Event Webhook: ECDSA P-256 / SHA-256 (DER signature, base64)
 * over `timestamp + rawBody`, the exact bytes received (re-serialised JSON does not verify),
 * then the timestamp's freshness: SendGrid publishes no replay window, so we keep one.
 */
export function verifySendgridSignature(
  rawBody: Buffer | string,
  signatureB64: string | undefined,
  timestamp: string | undefined,
  publicKey: string | KeyObject,
  options: FreshnessOptions = {},
): VerifyResult<true> {
  if (!signatureB64 || !timestamp)
    return fail('malformed', `the ${SENDGRID_SIGNATURE_HEADER} and ${SENDGRID_TIMESTAMP_HEADER} headers are required`);
  if (!/^\d{1,12}$/.test(timestamp)) return fail('malformed', `${SENDGRID_TIMESTAMP_HEADER} must be unix seconds`);
  const signature = Buffer.from(signatureB64, 'base64');
  if (signature.length === 0) return fail('malformed', `${SENDGRID_SIGNATURE_HEADER} is not base64`);
  const key = typeof publicKey === 'string' ? sendgridPublicKey(publicKey) : publicKey;
  const body = typeof rawBody === 'string' ? Buffer.from(rawBody, 'utf8') : rawBody;
  let ok = false;
  try {
    ok = verifySignature('sha256', Buffer.concat([Buffer.from(timestamp, 'utf8'), body]), key, signature);
  } catch {
    ok = false;
  }
  if (!ok) return fail('bad_signature', 'the SendGrid signature does not verify');
  if (!fresh(Number(timestamp), options.now ?? Date.now(), options.maxAgeSeconds ?? 300)) {
    return fail('stale', 'the SendGrid signature timestamp is outside the accepted window');
  }
  return { ok: true, value: true };
}

function kindOf(e: Record<string, unknown>): DeliveryEventKind | undefined {
  switch (e.event) {
    case 'delivered':
      return 'delivered';
    case 'deferred':
      return 'deferred';
    // `type: blocked` is reputation, content or policy: the address is fine.
    case 'bounce':
      return e.type === 'blocked' ? 'blocked' : 'bounced_hard';
    case 'dropped':
      return 'dropped';
    case 'spamreport':
      return 'complained';
    // `group_unsubscribe` leaves one ASM group only: not a reason to stop all mail.
    case 'unsubscribe':
      return 'unsubscribed';
    default:
      return undefined;
  }
}

/** The most events one SendGrid request may carry; more is refused whole (`too_many_events`). */
export const SENDGRID_MAX_EVENTS = 10_000;

/**
 * Normalises a SendGrid Event Webhook body (a JSON array). Our ids come back as top-level
 * keys (`custom_args` are flattened into each event). Events of other types (processed,
 * open, click, group_unsubscribe, …) are skipped, not errors: SendGrid adds types and
 * fields at any time. An event of a type Sluice acts on needs its `email`, its
 * `sg_event_id` and its `timestamp` (unix seconds, inside `window`); the first one without
 * makes the whole batch `malformed`, naming the field (`3.timestamp`), so a batch is taken
 * whole or not at all. More than {@link SENDGRID_MAX_EVENTS} entries: `too_many_events`.
 */
export function normalizeSendgridEvents(body: unknown, window: EventWindow = {}): VerifyResult<DeliveryEvent[]> {
  if (!Array.isArray(body)) return fail('malformed', 'the body must be a JSON array of events');
  if (body.length > SENDGRID_MAX_EVENTS) {
    return fail('too_many_events', `${body.length} events in one request; at most ${SENDGRID_MAX_EVENTS}`);
  }
  const out: DeliveryEvent[] = [];
  for (const [i, e] of (body as unknown[]).entries()) {
    if (!isObject(e)) return badField(String(i), 'must be an event object');
    const kind = kindOf(e);
    if (!kind) continue;
    const recipient = cleanAddress(e.email);
    if (!recipient) return badField(`${i}.email`, 'must be an email address');
    if (typeof e.sg_event_id !== 'string' || !/^[\x21-\x7e]{1,128}$/.test(e.sg_event_id)) {
      return badField(`${i}.sg_event_id`, 'must be the event id (1 to 128 printable characters)');
    }
    if (typeof e.timestamp !== 'number') return badField(`${i}.timestamp`, 'must be unix seconds (a number)');
    const at = eventTime(e.timestamp, `${i}.timestamp`, window);
    if (!at.ok) return at;
    const reason = text(e.reason) || text(e.response);
    out.push({
      provider: 'sendgrid',
      kind,
      messageId: cleanId(e.sluice_id),
      tenantId: cleanId(e.sluice_tenant),
      campaignId: cleanId(e.sluice_campaign),
      providerMessageId: typeof e.sg_message_id === 'string' ? e.sg_message_id : undefined,
      recipient,
      at: at.value,
      reason,
      enhanced: enhancedCode(e.status, reason),
      eventId: e.sg_event_id,
    });
  }
  return { ok: true, value: out };
}
