import libmime from 'libmime';
import type { QueuedMessage } from '@sluice/core';

/** RFC 2047 §2: an encoded-word is at most 75 characters; a longer name takes several. */
const ENCODED_WORD_MAX = 75;

/**
 * `"Name" <addr>` or `addr`. The name is a quoted-string (RFC 5322), or base64 encoded-words
 * (RFC 2047, libmime's as nodemailer's) when it is not plain ASCII, as SES requires of
 * `FromEmailAddress`; a long name is split on whole characters, each word within the limit.
 */
export function formatAddress(from: QueuedMessage['from']): string {
  if (!from.name) return from.address;
  if (/[^\x20-\x7e]/.test(from.name))
    return `${libmime.encodeWord(from.name, 'B', ENCODED_WORD_MAX)} <${from.address}>`;
  return `"${from.name.replace(/[\\"]/g, (c) => `\\${c}`)}" <${from.address}>`;
}

/**
 * Raw MIME with our `Message-ID` header, inserted on top when its header section has none
 * (one given by the sender is kept: the raw message is theirs). Keeps the raw's line ends.
 */
export function withMessageId(raw: string, messageId: string): string {
  const end = /\r?\n\r?\n/.exec(raw);
  const head = end ? raw.slice(0, end.index) : raw;
  if (/^message-id[ \t]*:/im.test(head)) return raw;
  const eol = raw.includes('\r\n') ? '\r\n' : '\n';
  return `Message-ID: ${messageId}${eol}${raw}`;
}

/**
 * The ids webhooks bring back, so events correlate with our records: the message's own
 * tags, then ours (ours win on a clash).
 */
export function correlationIds(message: QueuedMessage): Record<string, string> {
  return {
    ...message.tags,
    sluice_id: message.id,
    sluice_tenant: message.tenantId,
    ...(message.campaignId ? { sluice_campaign: message.campaignId } : {}),
  };
}

/** The same ids as MIME headers, for SMTP, where nothing else carries them. */
export function correlationHeaders(message: QueuedMessage): Record<string, string> {
  return {
    'X-Sluice-Id': message.id,
    'X-Sluice-Tenant': message.tenantId,
    ...(message.campaignId ? { 'X-Sluice-Campaign': message.campaignId } : {}),
  };
}
