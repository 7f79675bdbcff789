import { GetAccountCommand, SESv2Client, SendEmailCommand, type SendEmailCommandInput } from '@aws-sdk/client-sesv2';
import type { ProviderConfig, QueuedMessage } from '@sluice/core';
import type { Outcome, Provider, SendContext } from './provider.js';
import { MESSAGE_HEADER, SubmitTracker } from './submit-tracking-agent.js';

/** Options of {@link createSesProvider}. */
export interface SesProviderOptions {
  id: string;
  config: ProviderConfig;
  /** Where mail goes when no credentials are configured. */
  sandboxUrl: string;
}

interface SdkError {
  name?: string;
  message?: string;
  code?: string;
  $metadata?: { httpStatusCode?: number };
  $response?: { headers?: Record<string, string> };
}

const NOT_SENT = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH']);

function retryAfter(err: SdkError, fallbackMs: number): number {
  const h = err.$response?.headers ?? {};
  const ms = Number(h['x-amz-retry-after']);
  if (Number.isFinite(ms) && ms > 0) return ms;
  const s = Number(h['retry-after']);
  return Number.isFinite(s) && s > 0 ? s * 1000 : fallbackMs;
}

/** Maps an SDK error to an outcome (esp-protocols.md §1.3). */
export function classifySesError(error: unknown): Outcome {
  const err = (error ?? {}) as SdkError;
  const name = err.name ?? 'Error';
  const text = err.message ?? String(error);
  const status = err.$metadata?.httpStatusCode;
  const reply = `${status ?? '-'} ${name}: ${text}`;
  if (/daily message quota/i.test(text)) return { kind: 'deferred', family: 'quota_exhausted', reply, retryAfterMs: 600_000 };
  if (name === 'TooManyRequestsException' || name === 'LimitExceededException' || name === 'ThrottlingException' || status === 429) {
    return { kind: 'throttled', retryAfterMs: retryAfter(err, 1000), reply };
  }
  switch (name) {
    case 'MessageRejected':
      return /not verified/i.test(text)
        ? { kind: 'rejected', family: 'sender_config', reply, suppress: false }
        : { kind: 'rejected', family: 'bad_recipient', reply, suppress: true };
    case 'MailFromDomainNotVerifiedException':
    case 'NotFoundException':
      return { kind: 'rejected', family: 'sender_config', reply, suppress: false };
    case 'BadRequestException':
      return { kind: 'rejected', family: 'content_rejected', reply, suppress: false };
    case 'SendingPausedException':
    case 'AccountSuspendedException':
      return { kind: 'deferred', family: 'account_halted', reply, retryAfterMs: 60_000 };
  }
  if (status !== undefined && status >= 500) return { kind: 'deferred', family: 'transient_system', reply };
  if (err.code !== undefined && NOT_SENT.has(err.code)) return { kind: 'deferred', family: 'transient_system', reply };
  if (status === undefined) {
    // The request may have reached SES before the connection broke or timed out.
    return { kind: 'ambiguous', reply };
  }
  return { kind: 'deferred', family: 'unknown', reply };
}

function toInput(message: QueuedMessage, context: SendContext, config: ProviderConfig): SendEmailCommandInput {
  const from = message.from.name ? `"${message.from.name.replace(/"/g, '')}" <${message.from.address}>` : message.from.address;
  const headers = [{ Name: 'Message-ID', Value: context.messageIdHeader }];
  for (const [Name, Value] of Object.entries(message.headers ?? {})) headers.push({ Name, Value });
  const tags = [{ Name: 'sluice_id', Value: message.id }, { Name: 'sluice_tenant', Value: message.tenantId }];
  if (message.campaignId) tags.push({ Name: 'sluice_campaign', Value: message.campaignId });
  for (const [Name, Value] of Object.entries(message.tags ?? {})) tags.push({ Name, Value });
  return {
    FromEmailAddress: from,
    Destination: { ToAddresses: [message.to] },
    ...(message.replyTo ? { ReplyToAddresses: [message.replyTo] } : {}),
    Content: {
      Simple: {
        Subject: { Data: message.subject, Charset: 'UTF-8' },
        Body: {
          ...(message.text !== undefined ? { Text: { Data: message.text, Charset: 'UTF-8' } } : {}),
          ...(message.html !== undefined ? { Html: { Data: message.html, Charset: 'UTF-8' } } : {}),
        },
        Headers: headers,
      },
    },
    EmailTags: tags,
    ...(config.configurationSetName ? { ConfigurationSetName: config.configurationSetName } : {}),
  };
}

/**
 * Amazon SES v2 through the real SDK. SDK retries are off (Sluice owns retries) and
 * request timeouts throw. With no credentials configured it sends to the sandbox.
 */
export function createSesProvider(options: SesProviderOptions): Provider {
  const { config } = options;
  const sandbox = config.accessKeyId === undefined;
  const endpoint = config.endpoint ?? (sandbox ? options.sandboxUrl : undefined);
  const tracker = new SubmitTracker();
  const client = new SESv2Client({
    region: config.region,
    ...(endpoint ? { endpoint } : {}),
    credentials: sandbox
      ? { accessKeyId: 'SANDBOX', secretAccessKey: 'sandbox' }
      : { accessKeyId: config.accessKeyId!, secretAccessKey: config.secretAccessKey! },
    maxAttempts: 1,
    requestHandler: {
      requestTimeout: config.timeoutMs,
      connectionTimeout: Math.min(config.timeoutMs, 5_000),
      throwOnRequestTimeout: true,
      ...tracker.agents({ keepAlive: true, maxSockets: config.concurrency }),
    },
  });
  // Name the message on the wire (before signing), so the agent can tell when it is out.
  client.middlewareStack.add(
    (next) => async (args) => {
      const input = args.input as SendEmailCommandInput;
      const id = input.EmailTags?.find((t) => t.Name === 'sluice_id')?.Value;
      const request = args.request as { headers?: Record<string, string> };
      if (id && request.headers) request.headers[MESSAGE_HEADER] = id;
      return next(args);
    },
    { step: 'build', name: 'sluiceMessageHeader' },
  );
  return {
    id: options.id,
    sandbox,
    async send(message, context) {
      const unwatch = context.onSubmitted ? tracker.watch(message.id, context.onSubmitted) : () => undefined;
      try {
        const out = await client.send(new SendEmailCommand(toInput(message, context, config)), {
          ...(context.signal ? { abortSignal: context.signal } : {}),
        });
        return { kind: 'accepted', providerMessageId: out.MessageId ?? '', reply: '200 OK' };
      } catch (error) {
        return classifySesError(error);
      } finally {
        unwatch();
      }
    },
    async check() {
      try {
        const account = await client.send(new GetAccountCommand({}));
        const q = account.SendQuota;
        return {
          ok: true,
          detail: `${endpoint ?? 'AWS'}: sending ${account.SendingEnabled === false ? 'disabled' : 'enabled'}, MaxSendRate ${q?.MaxSendRate ?? '?'}/s, Max24HourSend ${q?.Max24HourSend ?? '?'}`,
        };
      } catch (error) {
        const err = error as SdkError;
        return { ok: false, error: `${endpoint ?? 'AWS'}: ${err.name ?? 'Error'}: ${err.message ?? String(error)}` };
      }
    },
    async close() {
      client.destroy();
    },
  };
}
