import FormData from 'form-data';
import Mailgun from 'mailgun.js';
import type { QueuedMessage } from '@sluice/core';
import type { Reply } from './classify.js';
import { correlationIds, formatAddress, withMessageId } from './internal/mime.js';
import { errorText, isNoAnswerCode } from './internal/net-error.js';
import { requireKey, type ProviderOptions } from './internal/options.js';
import { classified, secretFilter, unanswered } from './internal/reply.js';
import {
  MAILGUN_BATCH_MAX_ENTRIES,
  mailgunBatchData,
  mailgunBatchGroup,
  mailgunBatchRefuses,
} from './mailgun-batch.js';
import type { BatchEntry, BatchSupport, Outcome, Provider, SendContext } from './provider.js';
import { SubmitTracker, Submission } from './submit-tracking-agent.js';

/** Options of {@link createMailgunProvider}. */
export type MailgunProviderOptions = ProviderOptions<'mailgun'>;

const MAILGUN_URL = 'https://api.mailgun.net';

type MessageData = Parameters<ReturnType<Mailgun['client']>['messages']['create']>[1];

/** What mailgun.js throws (`APIError`): no response headers, whatever the status. */
interface MgError {
  type?: string;
  status?: number;
  message?: string;
  details?: string;
}

function toMessageData(message: QueuedMessage, context: SendContext): MessageData {
  if (message.raw !== undefined) {
    // POST /v3/<domain>/messages.mime: the MIME as a file part, `to` makes the envelope.
    return { to: message.to, message: Buffer.from(withMessageId(message.raw, context.messageIdHeader), 'utf8') };
  }
  const data: Record<string, string | string[]> = {
    from: formatAddress(message.from),
    to: message.to,
    'h:Message-Id': context.messageIdHeader,
    'o:tag': [message.stream, ...(message.campaignId ? [message.campaignId] : [])],
  };
  if (message.subject !== undefined) data.subject = message.subject;
  if (message.replyTo) data['h:Reply-To'] = message.replyTo;
  for (const [name, value] of Object.entries(message.headers ?? {})) data[`h:${name}`] = value;
  for (const [name, value] of Object.entries(correlationIds(message))) data[`v:${name}`] = value;
  if (message.template !== undefined) {
    data.template = message.template.name;
    data['t:variables'] = JSON.stringify(message.template.data);
  } else {
    if (message.text !== undefined) data.text = message.text;
    if (message.html !== undefined) data.html = message.html;
  }
  return data as MessageData;
}

/**
 * Mailgun through `mailgun.js` (axios; it never retries). The SDK takes no HTTP agent, so
 * submission is seen on Node's `http.client.request.start` channel, within the send's
 * async context. `sandbox: true` sends to the local sandbox; a real provider without an API
 * key refuses to start.
 */
export function createMailgunProvider(options: MailgunProviderOptions): Provider {
  const { config } = options;
  const sandbox = config.sandbox;
  const url = sandbox ? options.sandbox.url : (config.endpoint ?? MAILGUN_URL);
  const key = sandbox ? 'sandbox' : requireKey(options.id, 'Mailgun', config.apiKey, 'MAILGUN_API_KEY');
  const hide = secretFilter([config.apiKey, config.apiKey && Buffer.from(`api:${config.apiKey}`).toString('base64')]);
  const tracker = new SubmitTracker();
  const stopListening = tracker.listen();
  const client = new Mailgun(FormData).client({ username: 'api', key, url, timeout: config.timeoutMs });

  function outcomeOf(error: unknown, submission: Submission) {
    const err = (error ?? {}) as MgError;
    // The SDK turns "no response" into status 400 with the axios code as its message.
    if (
      err.type !== 'MailgunAPIError' ||
      typeof err.status !== 'number' ||
      (err.status === 400 && isNoAnswerCode(err.message))
    ) {
      const text = err.type === 'MailgunAPIError' ? `${err.message ?? ''}: ${err.details ?? ''}` : errorText(error);
      return unanswered('http', hide(text), submission.submitted);
    }
    const headers = submission.headers;
    const reply: Reply = {
      channel: 'http',
      status: err.status,
      text: hide(`${err.message ?? ''} ${err.details ?? ''}`.trim()),
      // Not from the SDK (it drops them): seen on the response of the tracked request.
      ...(headers ? { headers } : {}),
    };
    return classified(reply);
  }

  async function post(data: MessageData, beforeSubmit: (() => Promise<void>) | undefined): Promise<Outcome> {
    const submission = new Submission(beforeSubmit);
    try {
      const out = await tracker.run(submission, () => client.messages.create(config.domain, data));
      return {
        kind: 'accepted',
        providerMessageId: out.id ?? '',
        reply: `HTTP ${out.status} ${out.message ?? ''}`.trim(),
        answered: true,
      };
    } catch (error) {
      return outcomeOf(error, submission);
    }
  }

  /**
   * The batch's one answer is every recipient's. A refusal names no recipient, so none is
   * suppressed for it; an address twice in one batch (its variables are keyed by address)
   * goes again later, on its own.
   */
  const batch: BatchSupport = {
    maxEntries: MAILGUN_BATCH_MAX_ENTRIES,
    refuses: mailgunBatchRefuses,
    groupKey: mailgunBatchGroup,
    async send(entries, context) {
      const seen = new Set<string>();
      const once: BatchEntry[] = [];
      for (const e of entries) {
        if (seen.has(e.message.to)) continue;
        seen.add(e.message.to);
        once.push(e);
      }
      const outcome = await post(mailgunBatchData(once) as MessageData, context.beforeSubmit);
      const each: Outcome = outcome.kind === 'rejected' && once.length > 1 ? { ...outcome, suppress: false } : outcome;
      const again = unanswered('http', 'the same address twice in one batch: sent again on its own', false);
      return entries.map((e) => (once.includes(e) ? each : again));
    },
  };

  return {
    id: options.id,
    kind: 'mailgun',
    sandbox,
    batch,
    // The key was required when it was made.
    async ready() {},
    send: (message, context) => post(toMessageData(message, context), context.beforeSubmit),
    async check() {
      // A domain lookup would need the account-level key; sending is what the key is for.
      return { ok: true, detail: `${url}: no check for Mailgun (the first send proves the key)` };
    },
    async close() {
      stopListening();
    },
  };
}
