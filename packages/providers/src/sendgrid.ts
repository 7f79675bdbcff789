import { MailService } from '@sendgrid/mail';
import type { QueuedMessage } from '@sluice/core';
import type { Reply } from './classify.js';
import { correlationIds } from './internal/mime.js';
import { errorText } from './internal/net-error.js';
import { requireKey, type ProviderOptions } from './internal/options.js';
import { classified, secretFilter, unanswered, unsupported } from './internal/reply.js';
import type { BatchEntry, BatchSupport, Outcome, Provider, SendContext } from './provider.js';
import {
  personalizationNamed,
  SENDGRID_BATCH_MAX_ENTRIES,
  sendgridBatchData,
  sendgridBatchGroup,
  sendgridBatchRefuses,
} from './sendgrid-batch.js';
import { SEND_HEADER, SubmitTracker, Submission } from './submit-tracking-agent.js';

/** Options of {@link createSendgridProvider}. */
export type SendgridProviderOptions = ProviderOptions<'sendgrid'>;

const SENDGRID_URL = 'https://api.sendgrid.com/';

type MailData = Parameters<MailService['send']>[0];

/** The request `MailService.send` hands its client (`@sendgrid/client` `request()`). */
interface SgRequest {
  method: string;
  url: string;
  headers?: Record<string, string>;
  body?: unknown;
}

/** The part of `@sendgrid/client` used here (its own types are not reachable from this package). */
interface SgClient {
  setApiKey(apiKey: string): void;
  setDefaultRequest(key: string, value: unknown): unknown;
  request(data: SgRequest): Promise<unknown>;
}

/** `ResponseError` (an HTTP answer >= 400), or the raw axios error when none came. */
interface SgError {
  code?: unknown;
  message?: string;
  response?: { headers?: Record<string, unknown>; body?: unknown };
}

function toMailData(message: QueuedMessage, context: SendContext, ipPoolName: string | undefined): MailData {
  const base = {
    from: { email: message.from.address, ...(message.from.name ? { name: message.from.name } : {}) },
    to: message.to,
    ...(message.replyTo ? { replyTo: message.replyTo } : {}),
    ...(message.subject !== undefined ? { subject: message.subject } : {}),
    headers: { ...message.headers, 'Message-ID': context.messageIdHeader },
    customArgs: correlationIds(message),
    categories: [message.stream, ...(message.campaignId ? [message.campaignId] : [])],
    ...(ipPoolName ? { ipPoolName } : {}),
  };
  if (message.template !== undefined) {
    return { ...base, templateId: message.template.name, dynamicTemplateData: message.template.data };
  }
  return {
    ...base,
    content: [
      ...(message.text !== undefined ? [{ type: 'text/plain', value: message.text }] : []),
      ...(message.html !== undefined ? [{ type: 'text/html', value: message.html }] : []),
    ] as [{ type: string; value: string }],
  };
}

/** The JSON body's errors (`{errors:[{message, field}]}`), else the body as text. */
function errorsText(body: unknown): string {
  const errors = (body as { errors?: unknown } | undefined)?.errors;
  if (Array.isArray(errors)) {
    return errors
      .map((e: { message?: unknown; field?: unknown }) =>
        typeof e.field === 'string' && e.field !== '' ? `${String(e.message)} (field ${e.field})` : String(e.message),
      )
      .join('; ');
  }
  return typeof body === 'string' ? body : JSON.stringify(body ?? '');
}

function lowerHeaders(headers: Record<string, unknown> | undefined): Record<string, string | undefined> {
  const out: Record<string, string | undefined> = {};
  for (const [name, value] of Object.entries(headers ?? {})) {
    if (typeof value === 'function') continue;
    if (Array.isArray(value)) out[name.toLowerCase()] = value.join(', ');
    else if (typeof value === 'string' || typeof value === 'number') out[name.toLowerCase()] = String(value);
  }
  return out;
}

/**
 * SendGrid v3 Mail Send through `@sendgrid/mail`, which never retries. Raw MIME cannot be
 * sent (refused without a network call). `sandbox: true` sends to the local sandbox; a real
 * provider without an API key refuses to start.
 */
export function createSendgridProvider(options: SendgridProviderOptions): Provider {
  const { config } = options;
  const sandbox = config.sandbox;
  const apiKey = sandbox ? 'SG.sandbox' : requireKey(options.id, 'SendGrid', config.apiKey, 'SENDGRID_API_KEY');
  const baseUrl = sandbox ? options.sandbox.url : (config.endpoint ?? SENDGRID_URL);
  const hide = secretFilter([config.apiKey]);
  const tracker = new SubmitTracker();
  const { httpAgent, httpsAgent } = tracker.agents({ keepAlive: true, maxSockets: config.concurrency });

  const service = new MailService();
  // MailService builds its own client; its `request()` takes axios options from `defaultRequest`.
  const client = (service as unknown as { client: SgClient }).client;
  client.setApiKey(apiKey);
  // After setApiKey, which resets the base URL.
  client.setDefaultRequest('baseUrl', baseUrl);
  client.setDefaultRequest('httpAgent', httpAgent);
  client.setDefaultRequest('httpsAgent', httpsAgent);
  client.setDefaultRequest('maxRedirects', 0);
  service.setTimeout(config.timeoutMs);
  // MailService also sends the message's own headers as HTTP headers: a `Content-Length` or
  // `Authorization` mail header would break or hijack the request. Only the body goes out,
  // with the header that tells the tracker which send the request carries.
  service.setClient({
    request: (data: SgRequest) => {
      // A single send's Message-ID, or a batch's name: the request the tracker gates.
      const send = data.headers?.['Message-ID'] ?? data.headers?.['X-Sluice-Batch'];
      return client.request({
        method: data.method,
        url: data.url,
        body: data.body,
        ...(send ? { headers: { [SEND_HEADER]: send } } : {}),
      });
    },
  } as unknown as Parameters<MailService['setClient']>[0]);

  function reply(err: SgError, status: number): Reply {
    return {
      channel: 'http',
      status,
      text: hide(errorsText(err.response?.body)),
      headers: lowerHeaders(err.response?.headers),
    };
  }

  /** One request: accepted (with its X-Message-Id), or what the error says. */
  async function request(data: MailData, key: string, beforeSubmit: (() => Promise<void>) | undefined) {
    const submission = new Submission(beforeSubmit);
    try {
      const unwatch = tracker.watch(key, submission);
      const [response] = await service.send(data).finally(unwatch);
      const id = lowerHeaders(response.headers as Record<string, unknown>)['x-message-id'] ?? '';
      const accepted: Outcome = {
        kind: 'accepted',
        providerMessageId: id,
        reply: `HTTP ${response.statusCode} X-Message-Id ${id}`,
        answered: true,
      };
      return { outcome: accepted, field: undefined };
    } catch (error) {
      const err = (error ?? {}) as SgError;
      if (err.response !== undefined && typeof err.code === 'number') {
        const field = (err.response.body as { errors?: { field?: unknown }[] } | undefined)?.errors?.[0]?.field;
        return { outcome: classified(reply(err, err.code)), field: typeof field === 'string' ? field : undefined };
      }
      return { outcome: unanswered('http', hide(errorText(error)), submission.submitted), field: undefined };
    }
  }

  /**
   * The request's one answer is every recipient's, but for a 400 naming one personalization:
   * that recipient's alone, and the others, which SendGrid did not take either, go again later.
   */
  function eachOf(entries: readonly BatchEntry[], outcome: Outcome, field: string | undefined): Outcome[] {
    const named = outcome.kind === 'rejected' ? personalizationNamed(field) : undefined;
    if (named === undefined || named >= entries.length) return entries.map(() => outcome);
    const other = unanswered('http', `not taken: the request was refused for another recipient (${field})`, false);
    return entries.map((_, i) => (i === named ? outcome : other));
  }

  const batch: BatchSupport = {
    maxEntries: SENDGRID_BATCH_MAX_ENTRIES,
    refuses: sendgridBatchRefuses,
    groupKey: sendgridBatchGroup,
    async send(entries, context) {
      const data = sendgridBatchData(entries, context.batchId, config.ipPoolName) as MailData;
      const { outcome, field } = await request(data, context.batchId, context.beforeSubmit);
      return eachOf(entries, outcome, field);
    },
  };

  return {
    id: options.id,
    kind: 'sendgrid',
    sandbox,
    batch,
    // The key was required when it was made.
    async ready() {},
    async send(message, context) {
      if (message.raw !== undefined) {
        return unsupported('SendGrid cannot send raw MIME: send text/html or a template through this provider');
      }
      const { outcome } = await request(
        toMailData(message, context, config.ipPoolName),
        context.messageIdHeader,
        context.beforeSubmit,
      );
      return outcome;
    },
    async check() {
      // Every SendGrid endpoint that proves the key can send needs another scope, or sends.
      return { ok: true, detail: `${baseUrl}: no check for SendGrid (the first send proves the key)` };
    },
    async close() {
      httpAgent.destroy();
      httpsAgent.destroy();
    },
  };
}
