import type { QueuedMessage } from '@sluice/core';
import { correlationIds } from './internal/mime.js';
import type { BatchEntry } from './provider.js';

// SendGrid v3 Mail Send for batches (docs/design/batches.md): one personalization a recipient,
// with its subject, its `Message-ID` and its custom args; its rendered text and html ride in
// its substitutions (`{{t}}`, `{{h}}`), which the content passes through. A message with a
// dynamic template goes with the template by id and its data per personalization. SendGrid
// answers once for the request; the webhooks' events carry each personalization's custom args.

/** SendGrid's limit: recipients across the personalizations of one request. */
export const SENDGRID_BATCH_MAX_ENTRIES = 1_000;
/** SendGrid's limit on a personalization's substitutions, in bytes. */
export const SENDGRID_SUBSTITUTIONS_MAX_BYTES = 10_000;

/** The substitutions of a recipient's rendered parts, without their wrappers (the helper adds `{{ }}`). */
function substitutionsOf(message: QueuedMessage): Record<string, string> {
  return {
    ...(message.text !== undefined ? { t: message.text } : {}),
    ...(message.html !== undefined ? { h: message.html } : {}),
  };
}

/** Bytes of a personalization's substitutions as SendGrid counts them: wrapped keys and values. */
function substitutionBytes(message: QueuedMessage): number {
  let bytes = 0;
  for (const [k, v] of Object.entries(substitutionsOf(message)))
    bytes += Buffer.byteLength(`{{${k}}}`) + Buffer.byteLength(v);
  return bytes;
}

/** Why a message cannot go in a batch request, or undefined when it can. */
export function sendgridBatchRefuses(message: QueuedMessage): string | undefined {
  if (message.raw !== undefined) return 'raw MIME goes alone (SendGrid cannot send it)';
  if (message.template === undefined && substitutionBytes(message) > SENDGRID_SUBSTITUTIONS_MAX_BYTES)
    return `its rendered parts pass SendGrid's ${SENDGRID_SUBSTITUTIONS_MAX_BYTES} bytes of substitutions a personalization: it goes alone`;
  return undefined;
}

/** Messages of one request share their sender, reply-to, categories, and template or parts. */
export function sendgridBatchGroup(message: QueuedMessage): string {
  return JSON.stringify([
    message.from.address,
    message.from.name ?? '',
    message.replyTo ?? '',
    message.stream,
    message.campaignId ?? '',
    message.template?.name ?? '',
    message.template === undefined ? [message.text !== undefined, message.html !== undefined] : [],
  ]);
}

/**
 * The mail data (as `@sendgrid/mail` takes it) of entries that share {@link sendgridBatchGroup}'s
 * key. `X-Sluice-Batch` names the request for the submit tracker, and the copies for logs.
 */
export function sendgridBatchData(entries: readonly BatchEntry[], batchId: string, ipPoolName: string | undefined) {
  const first = entries[0]!.message;
  const personalizations = entries.map(({ message, messageIdHeader }) => ({
    to: [{ email: message.to }],
    ...(message.subject !== undefined ? { subject: message.subject } : {}),
    headers: { ...message.headers, 'Message-ID': messageIdHeader },
    customArgs: correlationIds(message),
    ...(message.template !== undefined
      ? { dynamicTemplateData: message.template.data }
      : { substitutions: substitutionsOf(message) }),
  }));
  const base = {
    from: { email: first.from.address, ...(first.from.name ? { name: first.from.name } : {}) },
    ...(first.replyTo ? { replyTo: first.replyTo } : {}),
    headers: { 'X-Sluice-Batch': batchId },
    personalizations,
    categories: [first.stream, ...(first.campaignId ? [first.campaignId] : [])],
    ...(ipPoolName ? { ipPoolName } : {}),
  };
  if (first.template !== undefined) return { ...base, templateId: first.template.name };
  return {
    ...base,
    content: [
      ...(first.text !== undefined ? [{ type: 'text/plain', value: '{{t}}' }] : []),
      ...(first.html !== undefined ? [{ type: 'text/html', value: '{{h}}' }] : []),
    ] as [{ type: string; value: string }],
  };
}

/** The personalization a 400 names (`personalizations.3.to.0.email`), when it names one. */
export function personalizationNamed(field: string | undefined): number | undefined {
  const match = field === undefined ? null : /^personalizations\.(\d+)\./.exec(field);
  return match ? Number(match[1]) : undefined;
}
