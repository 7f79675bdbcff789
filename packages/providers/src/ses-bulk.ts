import type {
  BulkEmailEntry,
  BulkEmailEntryResult,
  MessageHeader,
  SendBulkEmailCommandInput,
} from '@aws-sdk/client-sesv2';
import type { QueuedMessage } from '@sluice/core';
import type { Reply } from './classify.js';
import { correlationIds, formatAddress } from './internal/mime.js';
import { classified } from './internal/reply.js';
import type { BatchEntry, Outcome } from './provider.js';

// SES v2 `SendBulkEmail` for batches (docs/design/batches.md): Sluice renders each recipient,
// and the call's inline template only passes the parts through (`{{s}}`, `{{t}}`, `{{h}}`; SES
// does not escape what it substitutes). A message with an SES template of its own goes with
// that template by name and its data per entry. Answers are per entry.

/** At most this many entries a call, as SES allows. */
export const SES_BULK_MAX_ENTRIES = 50;

/** The pass-through template: every part is the recipient's own, rendered by Sluice. */
const PASS_THROUGH = { Subject: '{{s}}', Text: '{{t}}', Html: '{{h}}' } as const;

/** Why a message cannot go in a bulk call, or undefined when it can. */
export function sesBulkRefuses(message: QueuedMessage): string | undefined {
  if (message.raw !== undefined) return 'raw MIME goes alone (SendBulkEmail takes a template)';
  return undefined;
}

/** Messages of one call share their sender, reply-to, and template (by name) or the pass-through. */
export function sesBulkGroup(message: QueuedMessage): string {
  return JSON.stringify([
    message.from.address,
    message.from.name ?? '',
    message.replyTo ?? '',
    message.template?.name ?? '',
    // The pass-through template has only the parts every entry of the call carries.
    message.template === undefined ? [message.text !== undefined, message.html !== undefined] : [],
  ]);
}

function headersOf(entry: BatchEntry): MessageHeader[] {
  const headers = [{ Name: 'Message-ID', Value: entry.messageIdHeader }];
  for (const [Name, Value] of Object.entries(entry.message.headers ?? {})) headers.push({ Name, Value });
  return headers;
}

function replacementData(message: QueuedMessage): string {
  if (message.template !== undefined) return JSON.stringify(message.template.data);
  return JSON.stringify({ s: message.subject ?? '', t: message.text ?? '', h: message.html ?? '' });
}

/** The `SendBulkEmail` input of entries that share {@link sesBulkGroup}'s key. */
export function sesBulkInput(
  entries: readonly BatchEntry[],
  batchId: string,
  configurationSetName: string | undefined,
): SendBulkEmailCommandInput {
  const first = entries[0]!.message;
  const bulk: BulkEmailEntry[] = entries.map((entry) => ({
    Destination: { ToAddresses: [entry.message.to] },
    ReplacementTags: Object.entries(correlationIds(entry.message)).map(([Name, Value]) => ({ Name, Value })),
    ReplacementHeaders: headersOf(entry),
    ReplacementEmailContent: { ReplacementTemplate: { ReplacementTemplateData: replacementData(entry.message) } },
  }));
  const parts = {
    Subject: PASS_THROUGH.Subject,
    ...(first.text !== undefined ? { Text: PASS_THROUGH.Text } : {}),
    ...(first.html !== undefined ? { Html: PASS_THROUGH.Html } : {}),
  };
  return {
    FromEmailAddress: formatAddress(first.from),
    ...(first.replyTo ? { ReplyToAddresses: [first.replyTo] } : {}),
    DefaultContent: {
      Template: {
        ...(first.template !== undefined ? { TemplateName: first.template.name } : { TemplateContent: parts }),
        // Required by SES even when every entry replaces it.
        TemplateData: '{}',
      },
    },
    DefaultEmailTags: [{ Name: 'sluice_batch', Value: batchId }],
    BulkEmailEntries: bulk,
    ...(configurationSetName ? { ConfigurationSetName: configurationSetName } : {}),
  };
}

/**
 * Each entry's status read as the single send's error of the same meaning would be
 * (`SendEmail`'s exception and HTTP status), so one rule table reads both.
 */
const STATUS_AS_ERROR: Record<string, { name: string; status: number }> = {
  MESSAGE_REJECTED: { name: 'MessageRejected', status: 400 },
  MAIL_FROM_DOMAIN_NOT_VERIFIED: { name: 'MailFromDomainNotVerifiedException', status: 400 },
  CONFIGURATION_SET_NOT_FOUND: { name: 'NotFoundException', status: 404 },
  TEMPLATE_NOT_FOUND: { name: 'NotFoundException', status: 404 },
  ACCOUNT_SUSPENDED: { name: 'AccountSuspendedException', status: 400 },
  ACCOUNT_THROTTLED: { name: 'TooManyRequestsException', status: 429 },
  ACCOUNT_DAILY_QUOTA_EXCEEDED: { name: 'LimitExceededException', status: 400 },
  INVALID_SENDING_POOL_NAME: { name: 'BadRequestException', status: 400 },
  ACCOUNT_SENDING_PAUSED: { name: 'SendingPausedException', status: 400 },
  CONFIGURATION_SET_SENDING_PAUSED: { name: 'SendingPausedException', status: 400 },
  INVALID_PARAMETER: { name: 'BadRequestException', status: 400 },
  TRANSIENT_FAILURE: { name: 'InternalFailure', status: 500 },
  FAILED: { name: 'InternalFailure', status: 500 },
};

/** One entry's outcome from its result; a missing result (a short answer) is a transient failure. */
export function sesBulkOutcome(result: BulkEmailEntryResult | undefined, hide: (text: string) => string): Outcome {
  if (result?.Status === 'SUCCESS') {
    const id = result.MessageId ?? '';
    return { kind: 'accepted', providerMessageId: id, reply: `HTTP 200 SUCCESS MessageId ${id}`, answered: true };
  }
  const status = result?.Status ?? 'FAILED';
  const as = STATUS_AS_ERROR[status] ?? { name: 'InternalFailure', status: 500 };
  const text = result === undefined ? 'no result for this entry in the answer' : (result.Error ?? '');
  const reply: Reply = {
    channel: 'http',
    status: as.status,
    text: hide(`${as.name}: ${status}: ${text}`),
    errorName: as.name,
  };
  return classified(reply);
}
