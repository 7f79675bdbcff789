import type { DeliveryEvent, DeliveryEventKind } from './event.js';
import { cleanAddress, cleanId, enhancedCode, epochMs, isObject, text } from './internal/fields.js';

interface Recipient {
  address: string;
  reason: string;
  enhanced: string | undefined;
}

function tag(tags: Record<string, unknown>, name: string): string | undefined {
  return cleanId(tags[name]);
}

function list(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

/**
 * Normalises the SES event inside an SNS notification's `Message` (a JSON string, or
 * already parsed): configuration-set event publishing (`eventType`, with our `sluice_*`
 * tags in `mail.tags`) or identity notifications (`notificationType`, without tags).
 * One notification can cover several recipients: one event each.
 *
 * Bounce `Permanent` is hard; `Transient` (sent only once SES has given up) and
 * `Undetermined` are soft; a complaint always counts; `DeliveryDelay` is a deferral
 * SES keeps retrying. Other types (Send, Open, Click, Reject, …) give no events.
 *
 * @param snsMessageId - the SNS `MessageId`: the dedupe key when SES gives no `feedbackId`.
 */
export function normalizeSesEvent(message: unknown, snsMessageId: string): DeliveryEvent[] {
  let m: unknown = message;
  if (typeof message === 'string') {
    try {
      m = JSON.parse(message);
    } catch {
      return [];
    }
  }
  if (!isObject(m)) return [];
  const type = m.eventType ?? m.notificationType;
  const mail = isObject(m.mail) ? m.mail : {};
  const tags = isObject(mail.tags) ? mail.tags : {};
  let kind: DeliveryEventKind;
  let detail: Record<string, unknown>;
  let recipients: Recipient[];
  switch (type) {
    case 'Bounce': {
      detail = isObject(m.bounce) ? m.bounce : {};
      kind = detail.bounceType === 'Permanent' ? 'bounced_hard' : 'bounced_soft';
      recipients = list(detail.bouncedRecipients)
        .filter(isObject)
        .map((r) => ({
          address: String(r.emailAddress),
          reason: text(r.diagnosticCode) || `${String(detail.bounceType)}/${String(detail.bounceSubType)}`,
          enhanced: enhancedCode(r.status, r.diagnosticCode),
        }));
      break;
    }
    case 'Complaint': {
      detail = isObject(m.complaint) ? m.complaint : {};
      kind = 'complained';
      const why = `complaint${typeof detail.complaintFeedbackType === 'string' ? `: ${detail.complaintFeedbackType}` : ''}`;
      recipients = list(detail.complainedRecipients)
        .filter(isObject)
        .map((r) => ({ address: String(r.emailAddress), reason: why, enhanced: undefined }));
      break;
    }
    case 'Delivery': {
      detail = isObject(m.delivery) ? m.delivery : {};
      kind = 'delivered';
      const reply = text(detail.smtpResponse);
      recipients = list(detail.recipients).map((r) => ({
        address: String(r),
        reason: reply,
        enhanced: enhancedCode(reply),
      }));
      break;
    }
    case 'DeliveryDelay': {
      detail = isObject(m.deliveryDelay) ? m.deliveryDelay : {};
      kind = 'deferred';
      recipients = list(detail.delayedRecipients)
        .filter(isObject)
        .map((r) => ({
          address: String(r.emailAddress),
          reason: text(r.diagnosticCode) || text(detail.delayType),
          enhanced: enhancedCode(r.status, r.diagnosticCode),
        }));
      break;
    }
    default:
      return [];
  }
  const at = epochMs(detail.timestamp ?? mail.timestamp);
  const base = typeof detail.feedbackId === 'string' && detail.feedbackId !== '' ? detail.feedbackId : snsMessageId;
  const out: DeliveryEvent[] = [];
  for (const r of recipients) {
    const recipient = cleanAddress(r.address);
    if (!recipient) continue;
    out.push({
      provider: 'ses',
      kind,
      messageId: tag(tags, 'sluice_id'),
      tenantId: tag(tags, 'sluice_tenant'),
      campaignId: tag(tags, 'sluice_campaign'),
      providerMessageId: typeof mail.messageId === 'string' ? mail.messageId : undefined,
      recipient,
      at: Number.isFinite(at) ? at : Date.now(),
      reason: r.reason,
      enhanced: r.enhanced,
      eventId: `${base.slice(0, 128)}/${recipient}`,
    });
  }
  return out;
}
