import type { QueuedMessage } from '@sluice/core';
import { correlationIds, formatAddress } from './internal/mime.js';
import type { BatchEntry } from './provider.js';

// Mailgun batch sending (docs/design/batches.md): one `POST /v3/<domain>/messages` with a `to`
// per recipient and `recipient-variables` carrying each one's rendered subject, text and html
// and its sluice id; the message's parts are `%recipient.s%`, `%recipient.t%`, `%recipient.h%`,
// and `v:sluice_id` is `%recipient.sluice_id%`, so each email and each of its webhook events
// carries its own. Mailgun sends each recipient an email of its own and answers once, with one
// id for the batch; a bounce comes later, by webhook, per recipient.

/** Mailgun's limit on a batch's recipients. */
export const MAILGUN_BATCH_MAX_ENTRIES = 1_000;

/** Why a message cannot go in a batch, or undefined when it can. */
export function mailgunBatchRefuses(message: QueuedMessage): string | undefined {
  if (message.raw !== undefined) return 'raw MIME goes alone (a batch is sent from its parts)';
  if (message.template !== undefined) return 'a Mailgun template goes alone (its variables are the message’s own)';
  return undefined;
}

/** Messages of one batch share their sender, reply-to, headers, tags and parts: only the recipient's own differ. */
export function mailgunBatchGroup(message: QueuedMessage): string {
  const { sluice_id: _id, ...shared } = correlationIds(message);
  return JSON.stringify([
    message.from.address,
    message.from.name ?? '',
    message.replyTo ?? '',
    message.stream,
    Object.entries(message.headers ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
    Object.entries(shared).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
    [message.subject !== undefined, message.text !== undefined, message.html !== undefined],
  ]);
}

/**
 * The form of a batch of entries that share {@link mailgunBatchGroup}'s key and whose addresses
 * differ (`recipient-variables` is keyed by address).
 */
export function mailgunBatchData(entries: readonly BatchEntry[]): Record<string, string | string[]> {
  const first = entries[0]!.message;
  const variables: Record<string, Record<string, string>> = {};
  for (const { message } of entries) {
    variables[message.to] = {
      ...(message.subject !== undefined ? { s: message.subject } : {}),
      ...(message.text !== undefined ? { t: message.text } : {}),
      ...(message.html !== undefined ? { h: message.html } : {}),
      sluice_id: message.id,
    };
  }
  const data: Record<string, string | string[]> = {
    from: formatAddress(first.from),
    to: entries.map(({ message }) => message.to),
    'recipient-variables': JSON.stringify(variables),
    'o:tag': [first.stream, ...(first.campaignId ? [first.campaignId] : [])],
  };
  if (first.subject !== undefined) data.subject = '%recipient.s%';
  if (first.text !== undefined) data.text = '%recipient.t%';
  if (first.html !== undefined) data.html = '%recipient.h%';
  if (first.replyTo) data['h:Reply-To'] = first.replyTo;
  for (const [name, value] of Object.entries(first.headers ?? {})) data[`h:${name}`] = value;
  for (const [name, value] of Object.entries(correlationIds(first)))
    data[`v:${name}`] = name === 'sluice_id' ? '%recipient.sluice_id%' : value;
  return data;
}
