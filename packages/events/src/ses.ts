import type { DeliveryEvent, DeliveryEventKind } from './event.js';
import { badField, fail } from './internal/fail.js';
import { cleanAddress, cleanId, enhancedCode, eventTime, isObject, text, type EventWindow } from './internal/fields.js';
import type { VerifyResult } from './verify-result.js';

function tag(tags: Record<string, unknown>, name: string): string | undefined {
  return cleanId(tags[name]);
}

/** SES sends a message to at most 50 recipients: no notification names more. */
export const SES_MAX_RECIPIENTS = 50;

// Where each type keeps its details and its recipients.
const PARTS = {
  Bounce: { detail: 'bounce', list: 'bouncedRecipients' },
  Complaint: { detail: 'complaint', list: 'complainedRecipients' },
  Delivery: { detail: 'delivery', list: 'recipients' },
  DeliveryDelay: { detail: 'deliveryDelay', list: 'delayedRecipients' },
} as const;

/** What one type means, and each recipient's reason; the recipient list is checked before. */
function meaning(type: keyof typeof PARTS, detail: Record<string, unknown>, entry: unknown) {
  const r = isObject(entry) ? entry : {};
  switch (type) {
    case 'Bounce':
      return {
        kind: (detail.bounceType === 'Permanent' ? 'bounced_hard' : 'bounced_soft') as DeliveryEventKind,
        reason: text(r.diagnosticCode) || `${String(detail.bounceType)}/${String(detail.bounceSubType)}`,
        enhanced: enhancedCode(r.status, r.diagnosticCode),
      };
    case 'Complaint': {
      const why = typeof detail.complaintFeedbackType === 'string' ? `: ${detail.complaintFeedbackType}` : '';
      return { kind: 'complained' as const, reason: `complaint${why}`.slice(0, 500), enhanced: undefined };
    }
    case 'Delivery': {
      const reply = text(detail.smtpResponse);
      return { kind: 'delivered' as const, reason: reply, enhanced: enhancedCode(reply) };
    }
    case 'DeliveryDelay':
      return {
        kind: 'deferred' as const,
        reason: text(r.diagnosticCode) || text(detail.delayType),
        enhanced: enhancedCode(r.status, r.diagnosticCode),
      };
  }
}

/**
 * Normalises the SES event inside an SNS notification's `Message` (a JSON string, or
 * already parsed): configuration-set event publishing (`eventType`, with our `sluice_*`
 * tags in `mail.tags`) or identity notifications (`notificationType`, without tags).
 * One notification can cover several recipients: one event each.
 *
 * Bounce `Permanent` is hard; `Transient` (sent only once SES has given up) and
 * `Undetermined` are soft; a complaint always counts; `DeliveryDelay` is a deferral
 * SES keeps retrying. Other types (Send, Open, Click, Reject, …), and a message that is
 * not an SES event at all (a test publish), give no events. An event Sluice acts on needs
 * its time (`bounce.timestamp`, …, inside `window`) and every recipient's address, at most
 * {@link SES_MAX_RECIPIENTS}; else it is `malformed` (naming the field, under `Message.`)
 * or `too_many_events`.
 *
 * @param snsMessageId - the SNS `MessageId`: the dedupe key when SES gives no `feedbackId`.
 */
export function normalizeSesEvent(
  message: unknown,
  snsMessageId: string,
  window: EventWindow = {},
): VerifyResult<DeliveryEvent[]> {
  let m: unknown = message;
  if (typeof message === 'string') {
    try {
      m = JSON.parse(message);
    } catch {
      return { ok: true, value: [] };
    }
  }
  if (!isObject(m)) return { ok: true, value: [] };
  const type = m.eventType ?? m.notificationType;
  if (typeof type !== 'string' || !Object.hasOwn(PARTS, type)) return { ok: true, value: [] };
  const part = PARTS[type as keyof typeof PARTS];
  const where = `Message.${part.detail}`;
  const detail = m[part.detail];
  if (!isObject(detail)) return badField(where, 'must be an object');
  const list = detail[part.list];
  if (!Array.isArray(list)) return badField(`${where}.${part.list}`, 'must be a list of recipients');
  if (list.length > SES_MAX_RECIPIENTS) {
    return fail(
      'too_many_events',
      `${list.length} recipients in one SES event; SES sends to at most ${SES_MAX_RECIPIENTS}`,
    );
  }
  const at = eventTime(detail.timestamp, `${where}.timestamp`, window);
  if (!at.ok) return at;
  const mail = isObject(m.mail) ? m.mail : {};
  const tags = isObject(mail.tags) ? mail.tags : {};
  const base = typeof detail.feedbackId === 'string' && detail.feedbackId !== '' ? detail.feedbackId : snsMessageId;
  const out: DeliveryEvent[] = [];
  for (const [i, entry] of (list as unknown[]).entries()) {
    const address = type === 'Delivery' ? entry : isObject(entry) ? entry.emailAddress : undefined;
    const recipient = cleanAddress(address);
    if (!recipient) {
      return badField(
        `${where}.${part.list}.${i}${type === 'Delivery' ? '' : '.emailAddress'}`,
        'must be an email address',
      );
    }
    const { kind, reason, enhanced } = meaning(type as keyof typeof PARTS, detail, entry);
    out.push({
      provider: 'ses',
      kind,
      messageId: tag(tags, 'sluice_id'),
      tenantId: tag(tags, 'sluice_tenant'),
      campaignId: tag(tags, 'sluice_campaign'),
      providerMessageId: typeof mail.messageId === 'string' ? mail.messageId : undefined,
      recipient,
      at: at.value,
      reason,
      enhanced,
      eventId: `${base.slice(0, 128)}/${recipient}`,
    });
  }
  return { ok: true, value: out };
}
