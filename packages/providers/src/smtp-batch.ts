import { createHash } from 'node:crypto';
import { recipientDomain, type QueuedMessage } from '@sluice/core';
import type { BatchEntry } from './provider.js';

// SMTP transactions of many recipients (docs/design/batches.md): the RCPTs of one receiving
// domain whose rendered messages are the same, one DATA for all of them. The receiver answers
// each RCPT (a refused one ends alone), then once after the data for every accepted one.

/** The `To` of a message shared by several recipients: a group that names none of them. */
export const UNDISCLOSED = 'undisclosed-recipients:;';

/** Why a message cannot share a transaction, or undefined when it can. */
export function smtpBatchRefuses(message: QueuedMessage): string | undefined {
  if (message.template !== undefined) return 'an ESP template goes alone (SMTP cannot send it)';
  if (message.raw !== undefined) return "raw MIME goes alone (its header section is its recipient's)";
  return undefined;
}

/**
 * Recipients share a transaction when their domain is one and their rendered message is the
 * same byte for byte once their address is left out: the key hashes both.
 */
export function smtpBatchGroup(message: QueuedMessage): string {
  const headers = Object.entries(message.headers ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const content = JSON.stringify([
    message.from.address,
    message.from.name ?? '',
    message.replyTo ?? '',
    message.subject ?? null,
    message.text ?? null,
    message.html ?? null,
    headers,
    message.tenantId,
    message.campaignId ?? '',
  ]);
  return `${recipientDomain(message.to)} ${createHash('sha256').update(content).digest('base64url')}`;
}

/**
 * The correlation headers of a shared message: its tenant, campaign and batch. No
 * `X-Sluice-Id`: the message is every recipient's; each RCPT's answer is its own.
 */
export function batchHeaders(entries: readonly BatchEntry[], batchId: string): Record<string, string> {
  const first = entries[0]!.message;
  return {
    ...first.headers,
    'X-Sluice-Tenant': first.tenantId,
    ...(first.campaignId ? { 'X-Sluice-Campaign': first.campaignId } : {}),
    'X-Sluice-Batch': batchId,
  };
}
