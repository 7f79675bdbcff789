import {
  GetAccountCommand,
  SESv2Client,
  SendBulkEmailCommand,
  SendEmailCommand,
  type EmailContent,
  type MessageTag,
  type SESv2ClientConfig,
  type SendEmailCommandInput,
} from '@aws-sdk/client-sesv2';
import { defaultProvider } from '@aws-sdk/credential-provider-node';
import { SluiceError, type QueuedMessage } from '@sluice/core';
import type { Reply } from './classify.js';
import { errorText } from './internal/net-error.js';
import { correlationIds, formatAddress, withMessageId } from './internal/mime.js';
import { withTimeout, type ProviderOptions } from './internal/options.js';
import { classified, secretFilter, unanswered } from './internal/reply.js';
import type { BatchContext, BatchEntry, Outcome, Provider, SendContext } from './provider.js';
import { SES_BULK_MAX_ENTRIES, sesBulkGroup, sesBulkInput, sesBulkOutcome, sesBulkRefuses } from './ses-bulk.js';
import { SEND_HEADER, SubmitTracker, Submission } from './submit-tracking-agent.js';

/** Options of {@link createSesProvider}. */
export type SesProviderOptions = ProviderOptions<'ses'>;

interface SdkError {
  name?: string;
  message?: string;
  $metadata?: { httpStatusCode?: number };
  $response?: { headers?: Record<string, string | undefined> };
}

function content(message: QueuedMessage, context: SendContext): EmailContent {
  const headers = [{ Name: 'Message-ID', Value: context.messageIdHeader }];
  for (const [Name, Value] of Object.entries(message.headers ?? {})) headers.push({ Name, Value });
  if (message.raw !== undefined) {
    return { Raw: { Data: Buffer.from(withMessageId(message.raw, context.messageIdHeader), 'utf8') } };
  }
  if (message.template !== undefined) {
    return {
      Template: {
        TemplateName: message.template.name,
        TemplateData: JSON.stringify(message.template.data),
        Headers: headers,
      },
    };
  }
  return {
    Simple: {
      Subject: { Data: message.subject ?? '', Charset: 'UTF-8' },
      Body: {
        ...(message.text !== undefined ? { Text: { Data: message.text, Charset: 'UTF-8' } } : {}),
        ...(message.html !== undefined ? { Html: { Data: message.html, Charset: 'UTF-8' } } : {}),
      },
      Headers: headers,
    },
  };
}

function toInput(
  message: QueuedMessage,
  context: SendContext,
  configurationSetName: string | undefined,
): SendEmailCommandInput {
  return {
    FromEmailAddress: formatAddress(message.from),
    Destination: { ToAddresses: [message.to] },
    ...(message.replyTo ? { ReplyToAddresses: [message.replyTo] } : {}),
    Content: content(message, context),
    EmailTags: Object.entries(correlationIds(message)).map(([Name, Value]) => ({ Name, Value })),
    ...(configurationSetName ? { ConfigurationSetName: configurationSetName } : {}),
  };
}

/**
 * Where an SES provider's credentials come from: the sandbox's dummy keys, the config's static
 * keys, or else the AWS default credential chain (environment with `AWS_SESSION_TOKEN`, SSO,
 * web identity, `AWS_PROFILE` and the shared files, ECS and EC2 roles), each remote source
 * bounded by `timeoutMs` with no retry, so a missing metadata service fails fast.
 */
function credentialsOf(config: SesProviderOptions['config']): NonNullable<SESv2ClientConfig['credentials']> {
  if (config.sandbox) return { accessKeyId: 'SANDBOX', secretAccessKey: 'sandbox' };
  if (config.accessKeyId !== undefined && config.secretAccessKey !== undefined) {
    return {
      accessKeyId: config.accessKeyId,
      secretAccessKey: config.secretAccessKey,
      ...(config.sessionToken !== undefined ? { sessionToken: config.sessionToken } : {}),
    };
  }
  return defaultProvider({ timeout: Math.min(config.timeoutMs, 2_000), maxRetries: 0 });
}

/**
 * Amazon SES v2 through the real SDK. SDK retries are off (Sluice owns retries) and
 * request timeouts throw. `sandbox: true` sends to the local sandbox; a real provider without
 * static keys takes the AWS default credential chain, and `ready()` fails when it yields none.
 */
export function createSesProvider(options: SesProviderOptions): Provider {
  const { config, id } = options;
  const sandbox = config.sandbox;
  const endpoint = sandbox ? options.sandbox.url : config.endpoint;
  const where = endpoint ?? `SES ${config.region}`;
  const hide = secretFilter([config.secretAccessKey, config.sessionToken]);
  const tracker = new SubmitTracker();
  const client = new SESv2Client({
    region: config.region,
    ...(endpoint ? { endpoint } : {}),
    credentials: credentialsOf(config),
    maxAttempts: 1,
    requestHandler: {
      requestTimeout: config.timeoutMs,
      connectionTimeout: Math.min(config.timeoutMs, 5_000),
      // Without it a request timeout only logs a warning (esp-protocols.md §0.3).
      throwOnRequestTimeout: true,
      ...tracker.agents({ keepAlive: true, maxSockets: config.concurrency }),
    },
  });

  // Names each send's request for the tracker (once, on the client: a middleware added
  // per command would rebuild the stack on every send): a message by its id, a batch by its own.
  client.middlewareStack.add(
    (next) => async (args) => {
      const input = args.input as { EmailTags?: MessageTag[]; DefaultEmailTags?: MessageTag[] };
      const id =
        input.EmailTags?.find((t) => t.Name === 'sluice_id')?.Value ??
        input.DefaultEmailTags?.find((t) => t.Name === 'sluice_batch')?.Value;
      const request = args.request as { headers?: Record<string, string> };
      if (id !== undefined && request.headers) request.headers[SEND_HEADER] = id;
      return next(args);
    },
    { step: 'build', name: 'sluiceSendHeader' },
  );

  function reply(err: SdkError, status: number): Reply {
    const name = err.name ?? 'Error';
    const headers = err.$response?.headers;
    return {
      channel: 'http',
      status,
      text: hide(`${name}: ${err.message ?? ''}`),
      errorName: name,
      ...(headers
        ? { headers: Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v])) }
        : {}),
    };
  }

  /** The outcome of a call that threw: no answer (ambiguous once submitted), or the error's. */
  function failed(error: unknown, submission: Submission): Outcome {
    const err = (error ?? {}) as SdkError;
    const status = err.$metadata?.httpStatusCode;
    // No status: refused, reset, timed out; a deserialisation error still has one.
    if (status === undefined) return unanswered('http', hide(errorText(error)), submission.submitted);
    return classified(reply(err, status));
  }

  /** One `SendBulkEmail` call: an outcome per entry, or the call's error for every entry. */
  async function sendBulk(entries: readonly BatchEntry[], context: BatchContext): Promise<Outcome[]> {
    const submission = new Submission(context.beforeSubmit);
    const command = new SendBulkEmailCommand(sesBulkInput(entries, context.batchId, config.configurationSetName));
    try {
      const unwatch = tracker.watch(context.batchId, submission);
      const out = await client.send(command, context.signal ? { abortSignal: context.signal } : {}).finally(unwatch);
      const results = out.BulkEmailEntryResults ?? [];
      return entries.map((_, i) => sesBulkOutcome(results[i], hide));
    } catch (error) {
      const outcome = failed(error, submission);
      return entries.map(() => outcome);
    }
  }

  return {
    id,
    kind: 'ses',
    sandbox,
    async ready() {
      // The chain's sources are bounded one by one; the whole is bounded too.
      const credentials = client.config.credentials();
      try {
        await withTimeout(credentials, config.timeoutMs);
      } catch (cause) {
        throw new SluiceError(
          'invalid_config',
          `providers.${id}: no AWS credentials for this real SES provider: ${hide(errorText(cause))} ` +
            `(give accessKeyId/secretAccessKey, AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY[/AWS_SESSION_TOKEN], AWS_PROFILE, or a role; ` +
            `sandbox: true sends to the local sandbox instead)`,
          { path: `providers.${id}`, cause },
        );
      }
    },
    async send(message, context) {
      const submission = new Submission(context.beforeSubmit);
      const command = new SendEmailCommand(toInput(message, context, config.configurationSetName));
      try {
        const unwatch = tracker.watch(message.id, submission);
        const out = await client.send(command, context.signal ? { abortSignal: context.signal } : {}).finally(unwatch);
        return {
          kind: 'accepted',
          providerMessageId: out.MessageId ?? '',
          reply: `HTTP 200 MessageId ${out.MessageId ?? ''}`,
          answered: true,
        };
      } catch (error) {
        return failed(error, submission);
      }
    },
    batch: {
      maxEntries: SES_BULK_MAX_ENTRIES,
      refuses: sesBulkRefuses,
      groupKey: sesBulkGroup,
      send: sendBulk,
    },
    async check() {
      try {
        const account = await client.send(new GetAccountCommand({}));
        const q = account.SendQuota;
        const quota = {
          maxSendRate: q?.MaxSendRate ?? 0,
          max24HourSend: q?.Max24HourSend ?? -1,
          sentLast24Hours: q?.SentLast24Hours ?? 0,
          sendingEnabled: account.SendingEnabled !== false,
        };
        return {
          ok: true,
          detail: `${where}: sending ${quota.sendingEnabled ? 'enabled' : 'disabled'}, MaxSendRate ${quota.maxSendRate}/s, sent ${quota.sentLast24Hours} of Max24HourSend ${quota.max24HourSend}`,
          quota,
        };
      } catch (error) {
        return { ok: false, error: `${where}: ${hide(errorText(error))}` };
      }
    },
    async close() {
      client.destroy();
    },
  };
}
