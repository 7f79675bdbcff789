import nodemailer from 'nodemailer';
import type SMTPPool from 'nodemailer/lib/smtp-pool';
import { Readable } from 'node:stream';
import { SluiceError, type QueuedMessage } from '@sluice/core';
import { correlationHeaders, withMessageId } from './internal/mime.js';
import { errorText } from './internal/net-error.js';
import type { ProviderOptions } from './internal/options.js';
import { classified, secretFilter, unanswered, unsupported } from './internal/reply.js';
import type { BatchContext, BatchEntry, BatchSupport, Outcome, Provider, SendContext } from './provider.js';
import { batchHeaders, smtpBatchGroup, smtpBatchRefuses, UNDISCLOSED } from './smtp-batch.js';
import { NotSubmittedError, Submission } from './submit-tracking-agent.js';

/** Options of {@link createSmtpProvider}. */
export type SmtpProviderOptions = ProviderOptions<'smtp'>;

type Transporter = ReturnType<typeof nodemailer.createTransport>;
type MailOptions = Parameters<Transporter['sendMail']>[0];
type SentInfo = SMTPPool.SentMessageInfo;

/** What nodemailer puts on an SMTP failure (esp-protocols.md §5.2). */
interface SmtpError {
  code?: string;
  responseCode?: number;
  response?: string;
  message?: string;
  /** The RCPT a refusal was for. */
  recipient?: string;
  /** Every RCPT refused, when none was accepted (`EENVELOPE`). */
  rejectedErrors?: SmtpError[];
}

function toMailOptions(message: QueuedMessage, context: SendContext): MailOptions {
  const common = { messageId: context.messageIdHeader, ...(context.signal ? { signal: context.signal } : {}) };
  if (message.raw !== undefined) {
    return {
      ...common,
      envelope: { from: message.from.address, to: [message.to] },
      raw: withMessageId(message.raw, context.messageIdHeader),
    };
  }
  return {
    ...common,
    from: message.from.name ? { name: message.from.name, address: message.from.address } : message.from.address,
    to: message.to,
    ...(message.replyTo ? { replyTo: message.replyTo } : {}),
    ...(message.subject !== undefined ? { subject: message.subject } : {}),
    ...(message.text !== undefined ? { text: message.text } : {}),
    ...(message.html !== undefined ? { html: message.html } : {}),
    headers: { ...message.headers, ...correlationHeaders(message) },
  };
}

/**
 * One message for every entry of a transaction: the first's content (the group's key says they
 * are the same), an envelope of all of them, and a `To` that names none.
 */
function toSharedMailOptions(entries: readonly BatchEntry[], context: BatchContext): MailOptions {
  const first = entries[0]!.message;
  return {
    messageId: entries[0]!.messageIdHeader,
    ...(context.signal ? { signal: context.signal } : {}),
    envelope: { from: first.from.address, to: entries.map((e) => e.message.to) },
    from: first.from.name ? { name: first.from.name, address: first.from.address } : first.from.address,
    to: UNDISCLOSED,
    ...(first.replyTo ? { replyTo: first.replyTo } : {}),
    ...(first.subject !== undefined ? { subject: first.subject } : {}),
    ...(first.text !== undefined ? { text: first.text } : {}),
    ...(first.html !== undefined ? { html: first.html } : {}),
    headers: batchHeaders(entries, context.batchId),
  };
}

/** The queue id in `250 2.0.0 OK queued as ABC123`, when the server names one. */
function queuedAs(response: string | undefined): string | undefined {
  return response === undefined ? undefined : /\bqueued as\s+<?([^\s>]+)>?/i.exec(response)?.[1];
}

/**
 * The message data as the connection reads it, its end held until `submission`'s gate
 * resolves (then the final dot follows); when the gate rejects the stream fails and the
 * data stays unterminated. The gate runs only once the connection has read all of the data
 * (it reads only after the server's 354), never while the message merely sits buffered: a
 * connection lost before DATA asks no gate and is not submitted.
 */
function gated(input: Readable, submission: Submission): Readable {
  let ended = false;
  let waiting = false;
  let opened = false;
  const open = (): void => {
    if (opened) return;
    opened = true;
    submission.gate().then(
      () => {
        submission.markSubmitted();
        out.push(null);
      },
      (error: unknown) => out.destroy(new NotSubmittedError(error)),
    );
  };
  const out = new Readable({
    read() {
      if (ended) return open();
      waiting = true;
      input.resume();
    },
    destroy(error, callback) {
      input.destroy(error ?? undefined);
      callback(error);
    },
  });
  input.pause();
  input.on('data', (chunk: Buffer) => {
    waiting = false;
    if (!out.push(chunk)) input.pause();
  });
  input.once('end', () => {
    ended = true;
    // Asked for more with nothing left: all of it has been read.
    if (waiting) open();
  });
  input.once('error', (error) => out.destroy(error));
  return out;
}

/** Message-ID without its angle brackets (nodemailer logs it either way). */
const bare = (id: string): string => id.replace(/^<|>$/g, '');

/**
 * A nodemailer logger that keeps one thing: why the pool gave a message up before any of
 * it was sent (a reused connection answered 421 or was closed). The error the send then
 * gets only says "Reached maximum number of retries", and the server's words are the
 * signal. Everything else nodemailer logs is dropped (it would carry addresses).
 */
function poolLogger(
  lastWords: Map<string, string>,
): Record<'trace' | 'debug' | 'info' | 'warn' | 'error' | 'fatal', (...args: unknown[]) => void> {
  const ignore = (): void => undefined;
  return {
    trace: ignore,
    debug: ignore,
    info(entry, format, ...args) {
      const e = entry as { tnx?: string; messageId?: unknown };
      if (
        e.tnx === 'pool' &&
        typeof e.messageId === 'string' &&
        typeof format === 'string' &&
        format.includes('before message')
      ) {
        const reason = args.at(-1);
        if (typeof reason === 'string') lastWords.set(bare(e.messageId), reason);
      }
    },
    warn: ignore,
    error: ignore,
    fatal: ignore,
  };
}

/** The first SMTP reply in an error text (`… rejected: 421-4.7.28 …`): its code and what follows. */
function replyIn(text: string): { status: number; text: string } | undefined {
  const match = /\b([45]\d\d)[ -](?=\d\.\d{1,3}\.\d{1,3}\b|\D)/.exec(text);
  return match ? { status: Number(match[1]), text: text.slice(match.index) } : undefined;
}

/** The connection pool: `concurrency` connections, `maxMessages` each, no instant requeue. */
function createPool(
  config: SmtpProviderOptions['config'],
  at: { host: string; port: number; secure: boolean },
  lastWords: Map<string, string>,
): Transporter {
  return nodemailer.createTransport({
    pool: true,
    ...at,
    ...(config.user !== undefined ? { auth: { user: config.user, pass: config.password ?? '' } } : {}),
    maxConnections: config.concurrency,
    maxMessages: config.maxMessages,
    // The pool would retry a message at once on a fresh connection when a reused one
    // answers 421 or turns out closed before any of its data was read. Not here: a 421 is
    // usually a receiver saying "slower", and an instant second try is exactly what it
    // asked us not to do, unseen by our signals and retries. The message comes back as
    // deferred instead (with the server's words, below), and goes through admission again.
    maxRequeues: 0,
    connectionTimeout: config.timeoutMs,
    greetingTimeout: config.timeoutMs,
    socketTimeout: config.timeoutMs,
    // Message fields never name files or URLs for nodemailer to read.
    disableFileAccess: true,
    disableUrlAccess: true,
    logger: poolLogger(lastWords),
  });
}

/**
 * SMTP through a nodemailer pool (`concurrency` connections, `maxMessages` each). A message
 * whose data went out is never sent again by the pool: a lost answer after DATA is
 * `ambiguous`. ESP templates cannot be sent. `sandbox: true` sends to the sandbox's SMTP
 * port (the config refuses a real one without a host).
 */
export function createSmtpProvider(options: SmtpProviderOptions): Provider {
  const { config } = options;
  const sandbox = config.sandbox;
  const host = sandbox ? options.sandbox.smtpHost : config.host;
  if (host === undefined) {
    throw new SluiceError('invalid_config', `providers.${options.id}.host: a real SMTP provider needs a host`, {
      path: `providers.${options.id}.host`,
    });
  }
  const port = sandbox ? options.sandbox.smtpPort : config.port;
  const hide = secretFilter([config.password]);
  const lastWords = new Map<string, string>();
  const transporter = createPool(config, { host, port, secure: sandbox ? false : config.secure }, lastWords);

  // By Message-ID: the send whose data is being streamed. The stream nodemailer hands the
  // connection is only read after the server's 354, and the terminating dot is written only
  // once it ends: so its end waits at the send's gate. A connection lost mid-data (or a
  // gate that refused) leaves the server an unterminated message, which it discards.
  const streaming = new Map<string, Submission>();
  transporter.use('stream', (mail, done) => {
    const submission = typeof mail.data.messageId === 'string' ? streaming.get(mail.data.messageId) : undefined;
    if (submission) {
      // Called again for each attempt the pool makes. The pool retries a message on a new
      // connection only when not a byte of it was read; should it ever try after the data
      // went out, the stream fails before a byte is written: the server never gets a
      // complete second copy (checked: it sees a connection closed mid-message).
      mail.message.processFunc((input: Readable) => {
        if (submission.submitted) {
          input.destroy(new Error('message data already sent once: not sent again'));
          return input;
        }
        return gated(input, submission);
      });
    }
    done();
  });

  /** What one transaction came to: its info or its error, whether its data went, the pool's last words. */
  interface Transaction {
    info?: SentInfo;
    error?: unknown;
    submission: Submission;
    /** Why the pool gave the message up before its data, in the server's words, when it did. */
    words: string | undefined;
  }

  async function transact(
    mail: MailOptions,
    idHeader: string,
    beforeSubmit: (() => Promise<void>) | undefined,
  ): Promise<Transaction> {
    const submission = new Submission(beforeSubmit);
    streaming.set(idHeader, submission);
    try {
      const info = (await transporter.sendMail(mail)) as SentInfo;
      return { info, submission, words: undefined };
    } catch (error) {
      return { error, submission, words: lastWords.get(bare(idHeader)) };
    } finally {
      streaming.delete(idHeader);
      lastWords.delete(bare(idHeader));
    }
  }

  function failed(error: unknown, tx: Transaction, receiverName: string | undefined): Outcome {
    const err = (error ?? {}) as SmtpError;
    // The receiving organisation, so its own rules are read first.
    const receiver = receiverName === undefined ? {} : { receiver: receiverName };
    if (typeof err.responseCode === 'number') {
      return classified({
        channel: 'smtp',
        status: err.responseCode,
        text: hide(err.response ?? err.message ?? ''),
        ...receiver,
      });
    }
    // Given up on a reused connection before its data went out: the server's own answer.
    const reply = tx.words === undefined ? undefined : replyIn(tx.words);
    if (reply !== undefined && !tx.submission.submitted)
      return classified({ channel: 'smtp', status: reply.status, text: hide(reply.text), ...receiver });
    // No reply at all: refused, dropped, timed out. After the data went out, nobody knows.
    return unanswered('smtp', hide(errorText(error)), tx.submission.submitted);
  }

  function acceptedBy(info: SentInfo): Outcome {
    const id = info.serverMessageId ?? queuedAs(info.response) ?? info.messageId;
    return { kind: 'accepted', providerMessageId: id, reply: info.response, answered: true };
  }

  /**
   * Each recipient's outcome of a shared transaction: its own RCPT refusal, else the answer
   * after the data (accepted, refused or none) that is every accepted recipient's.
   */
  function eachOf(entries: readonly BatchEntry[], tx: Transaction, receiver: string | undefined): Outcome[] {
    const { info } = tx;
    const thrown = tx.error as SmtpError | undefined;
    const refusals = info?.rejectedErrors ?? thrown?.rejectedErrors ?? [];
    const refused = new Map(refusals.map((e: SmtpError) => [String(e.recipient ?? '').toLowerCase(), e]));
    const accepted = new Set((info?.accepted ?? []).map((a) => String(a).toLowerCase()));
    return entries.map(({ message }) => {
      const to = message.to.toLowerCase();
      const own = refused.get(to);
      if (own !== undefined) return failed(own, tx, receiver);
      if (info === undefined) return failed(tx.error, tx, receiver);
      if (accepted.has(to)) return acceptedBy(info);
      return unanswered('smtp', hide(`no answer for this recipient: ${info.response}`), tx.submission.submitted);
    });
  }

  const batch: BatchSupport | undefined =
    config.recipientsPerTransaction > 1
      ? {
          maxEntries: config.recipientsPerTransaction,
          refuses: smtpBatchRefuses,
          groupKey: smtpBatchGroup,
          async send(entries, context) {
            const tx = await transact(
              toSharedMailOptions(entries, context),
              entries[0]!.messageIdHeader,
              context.beforeSubmit,
            );
            return eachOf(entries, tx, context.receiver);
          },
        }
      : undefined;

  return {
    id: options.id,
    kind: 'smtp',
    sandbox,
    ...(batch ? { batch } : {}),
    // Nothing to resolve: the host and login are in its config.
    async ready() {},
    async send(message, context) {
      if (message.template !== undefined) {
        return unsupported(
          `SMTP cannot send the ESP template "${message.template.name}": send text/html or raw MIME through this provider`,
        );
      }
      const tx = await transact(toMailOptions(message, context), context.messageIdHeader, context.beforeSubmit);
      const { info } = tx;
      if (info === undefined) return failed(tx.error, tx, context.receiver);
      // One recipient per message: a refused recipient is the whole message refused.
      const refused = (info.rejectedErrors as SmtpError[] | undefined)?.[0];
      if (refused !== undefined) return failed(refused, tx, context.receiver);
      const to = message.to.toLowerCase();
      if (!info.accepted.some((a) => String(a).toLowerCase() === to)) {
        return unanswered('smtp', hide(`no recipient accepted: ${info.response}`), tx.submission.submitted);
      }
      return acceptedBy(info);
    },
    async check() {
      try {
        await transporter.verify();
        return {
          ok: true,
          detail: `smtp://${host}:${port}: connected${config.user !== undefined ? ' and authenticated' : ''}`,
        };
      } catch (error) {
        const err = error as SmtpError;
        const text = err.response ?? errorText(error);
        return { ok: false, error: `smtp://${host}:${port}: ${hide(text)}` };
      }
    },
    async close() {
      transporter.close();
    },
  };
}
