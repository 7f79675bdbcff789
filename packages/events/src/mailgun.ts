import { createHmac, timingSafeEqual } from 'node:crypto';
import type { DeliveryEvent, DeliveryEventKind } from './event.js';
import { cleanAddress, cleanId, enhancedCode, eventTime, isObject, text, type EventWindow } from './internal/fields.js';
import { badField, fail, fresh } from './internal/fail.js';
import type { VerifyResult } from './verify-result.js';
import type { FreshnessOptions } from './sendgrid.js';

/** The `signature` object of a Mailgun webhook body. */
export interface MailgunSignature {
  timestamp: string;
  token: string;
  signature: string;
}

/** Reads the `signature` object of a Mailgun webhook body, or says what is wrong. */
export function parseMailgunSignature(body: unknown): VerifyResult<MailgunSignature> {
  if (!isObject(body) || !isObject(body.signature)) return fail('malformed', 'signature is missing');
  const { timestamp, token, signature } = body.signature;
  if (typeof timestamp !== 'string' || !/^\d{1,12}$/.test(timestamp))
    return fail('malformed', 'signature.timestamp must be unix seconds');
  if (typeof token !== 'string' || !/^[A-Za-z0-9_-]{16,256}$/.test(token))
    return fail('malformed', 'signature.token must be 16 to 256 letters and digits');
  if (typeof signature !== 'string' || !/^[0-9a-f]{64}$/i.test(signature))
    return fail('malformed', 'signature.signature must be 64 hex digits');
  return { ok: true, value: { timestamp, token, signature } };
}

/**
 * Verifies a Mailgun webhook signature: `hex(HMAC-SHA256(signingKey, timestamp + token))`,
 * compared in constant time, then the timestamp's freshness. The key is the HTTP webhook
 * signing key, not the API key. Replays inside the window are the caller's to stop, by
 * remembering tokens (this function is pure).
 */
export function verifyMailgunSignature(
  sig: MailgunSignature,
  signingKey: string,
  options: FreshnessOptions = {},
): VerifyResult<true> {
  const expected = createHmac('sha256', signingKey)
    .update(sig.timestamp + sig.token)
    .digest();
  const given = Buffer.from(sig.signature, 'hex');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
    return fail('bad_signature', 'the Mailgun signature does not verify');
  }
  if (!fresh(Number(sig.timestamp), options.now ?? Date.now(), options.maxAgeSeconds ?? 300)) {
    return fail('stale', 'the Mailgun signature timestamp is outside the accepted window');
  }
  return { ok: true, value: true };
}

function kindOf(d: Record<string, unknown>): DeliveryEventKind | undefined {
  switch (d.event) {
    case 'delivered':
      return 'delivered';
    case 'failed':
      if (d.severity === 'permanent') return 'bounced_hard';
      // After its retries run out Mailgun reports `reason: old` as temporary: it is final,
      // so it counts as a soft bounce; other temporary failures are still being retried.
      return d.reason === 'old' ? 'bounced_soft' : 'deferred';
    case 'rejected':
      return 'dropped';
    case 'complained':
      return 'complained';
    case 'unsubscribed':
      return 'unsubscribed';
    default:
      return undefined;
  }
}

/**
 * Normalises one Mailgun webhook body (`{ signature, "event-data" }`): our ids come back in
 * `user-variables` (the `v:` values we sent). Other events (accepted, opened, clicked, …)
 * give null, not an error. An event Sluice acts on needs its `id`, its `recipient` and its
 * `timestamp` (unix seconds, inside `window`); without them it is `malformed`, naming the
 * field, since its dedupe key (`id@timestamp`) and its time would be made up.
 */
export function normalizeMailgunEvent(body: unknown, window: EventWindow = {}): VerifyResult<DeliveryEvent | null> {
  if (!isObject(body) || !isObject(body['event-data'])) return badField('event-data', 'must be an object');
  const d = body['event-data'];
  const kind = kindOf(d);
  if (!kind) return { ok: true, value: null };
  const recipient = cleanAddress(d.recipient);
  if (!recipient) return badField('event-data.recipient', 'must be an email address');
  if (typeof d.id !== 'string' || !/^[\x21-\x7e]{1,128}$/.test(d.id)) {
    return badField('event-data.id', 'must be the event id (1 to 128 printable characters)');
  }
  if (typeof d.timestamp !== 'number') return badField('event-data.timestamp', 'must be unix seconds (a number)');
  const at = eventTime(d.timestamp, 'event-data.timestamp', window);
  if (!at.ok) return at;
  const vars = isObject(d['user-variables']) ? d['user-variables'] : {};
  const status = isObject(d['delivery-status']) ? d['delivery-status'] : {};
  const headers = isObject(d.message) && isObject(d.message.headers) ? d.message.headers : {};
  const code = typeof status.code === 'number' ? `${status.code} ` : '';
  const detail = text(status.message) || text(status.description) || text(d.reason);
  return {
    ok: true,
    value: {
      provider: 'mailgun',
      kind,
      messageId: cleanId(vars.sluice_id),
      tenantId: cleanId(vars.sluice_tenant),
      campaignId: cleanId(vars.sluice_campaign),
      providerMessageId: typeof headers['message-id'] === 'string' ? headers['message-id'] : undefined,
      recipient,
      at: at.value,
      reason: detail ? `${code}${detail}`.slice(0, 500) : '',
      enhanced: enhancedCode(status.message, status.description),
      // Mailgun's ids are unique only per day; with the event's own timestamp they are not reused.
      eventId: `${d.id.slice(0, 64)}@${d.timestamp}`,
    },
  };
}
