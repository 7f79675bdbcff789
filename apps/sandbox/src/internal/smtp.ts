import { randomBytes } from 'node:crypto';
import type { AddressInfo, Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import {
  SMTPServer,
  type SMTPServerAddress,
  type SMTPServerDataStream,
  type SMTPServerEnvelope,
  type SMTPServerSession,
} from 'smtp-server';
import { domainOf } from './address.js';
import type { SandboxContext } from './context.js';
import { mimeHeaders } from './mime.js';

/** SES's limit, and about what the large receivers take. */
const MAX_MESSAGE_BYTES = 40 * 1024 * 1024;
/** Headers are looked for in this much of the message; real heads are a few KB. */
const HEAD_BYTES = 256 * 1024;

// Real receivers' texts (Gmail, Microsoft), so a reply classifier meets what it will meet.
const NO_SUCH_USER =
  "5.1.1 The email account that you tried to reach does not exist. Please try double-checking the recipient's email address for typos or unnecessary spaces. https://support.google.com/mail/?p=NoSuchUser - gsmtp";
const OVER_QUOTA =
  '4.2.2 The email account that you tried to reach is over quota. Please direct the recipient to https://support.google.com/mail/?p=OverQuotaTemp - gsmtp';
const TEMPORARY_PROBLEM = '4.3.0 Temporary system problem. Try again later.';
const BUSY_RECIPIENT =
  '4.2.1 The user you are trying to contact is receiving mail at a rate that prevents additional messages from being delivered. Please resend your message at a later time. If the user is able to receive mail at that time, your message will be delivered. For more information, go to https://support.google.com/mail/?p=ReceivingRate - gsmtp';
const GREYLISTED = '4.7.1 Greylisted, please try again later';
const TOO_MANY_CONNECTIONS =
  '4.3.2 The maximum number of concurrent server connections has exceeded a limit, closing transmission channel';
const BAD_CREDENTIALS =
  '5.7.8 Username and Password not accepted. For more information, go to https://support.google.com/mail/?p=BadCredentials - gsmtp';
const blockList = (ip: string): string =>
  `5.7.1 Unfortunately, messages from [${ip}] weren't sent. Please contact your Internet service provider since part of their network is on our block list (S3140). You can also refer your provider to http://mail.live.com/mail/troubleshooting.aspx#errors.`;

/** Options of {@link startSmtp}. */
export interface SmtpOptions {
  port: number;
  host: string;
  /** When set, AUTH with this user and `password` is required before MAIL FROM. */
  user: string | undefined;
  password: string | undefined;
}

/** A listening SMTP sink. */
export interface SmtpSink {
  readonly port: number;
  /** Stops listening and destroys every open connection. */
  close(): Promise<void>;
}

/** What the accepted RCPTs of one transaction decided for its DATA. */
interface Transaction {
  /** Domain of the first accepted recipient: whose behaviour applied. */
  domain: string;
  latencyMs: number;
  dropAfterData: boolean;
}

/** The connection objects smtp-server keeps; `_socket` is internal, which a test double may use. */
interface Connection {
  session?: { id: string };
  _socket: Socket;
}

/** An error smtp-server answers with as `<responseCode> <message>`. */
function reply(code: number, text: string): Error {
  return Object.assign(new Error(text), { responseCode: code });
}

/** `421-4.7.28 text` → 421, `4.7.28 text`: smtp-server adds the code and sends one line. */
function parseReply(configured: string): Error {
  return reply(Number(configured.slice(0, 3)), configured.slice(4));
}

/**
 * Starts an SMTP server that decides per RCPT by the recipient's domain, with the same policy
 * (and rate buckets) as the HTTP ESPs. Refusals are answered at RCPT; an accepted message is
 * read in full, recorded, then answered after the latency, or dropped unanswered.
 */
export async function startSmtp(ctx: SandboxContext, options: SmtpOptions): Promise<SmtpSink> {
  // Keyed by the envelope object, which smtp-server replaces for every transaction.
  const transactions = new WeakMap<SMTPServerEnvelope, Transaction>();
  /** Per domain, the sessions with a transaction in progress for it (`maxConcurrent`). */
  const inProgress = new Map<string, Set<string>>();

  /** Ends a session's transaction for `maxConcurrent`: answered, failed or its connection gone. */
  function done(session: SMTPServerSession): void {
    for (const sessions of inProgress.values()) sessions.delete(session.id);
  }

  /** Whether a new transaction for `domain` would pass its `maxConcurrent`; takes its place if so. */
  function enter(domain: string, session: SMTPServerSession): boolean {
    const max = ctx.policy().behaviourOf(domain).maxConcurrent;
    if (max === undefined) return true;
    const sessions = inProgress.get(domain) ?? new Set<string>();
    inProgress.set(domain, sessions);
    if (!sessions.has(session.id) && sessions.size >= max) return false;
    sessions.add(session.id);
    return true;
  }

  function destroy(session: SMTPServerSession): void {
    for (const connection of server.connections as Set<Connection>) {
      if (connection.session?.id === session.id) connection._socket.destroy();
    }
  }

  function onRcptTo(address: SMTPServerAddress, session: SMTPServerSession, callback: (err?: Error) => void): void {
    const { envelope } = session;
    const mailFrom = envelope.mailFrom === false ? '' : envelope.mailFrom.address;
    const domain = domainOf(address.address);
    const decision = ctx.policy().decide(domain, [address.address], performance.now(), { mailFrom });
    const log = { domain, address: address.address, session: session.id };
    switch (decision.kind) {
      case 'drop-before-data':
        ctx.recorder.count(domain, 'dropped');
        ctx.logger.debug(log, 'smtp: dropped at RCPT');
        destroy(session);
        // The socket is gone, so smtp-server writes nothing; the callback only ends the command.
        return callback(reply(421, 'dropped'));
      case 'bounce':
        ctx.recorder.count(domain, 'rejected');
        return callback(reply(550, NO_SUCH_USER));
      case 'block':
        ctx.recorder.count(domain, 'rejected');
        return callback(reply(550, blockList(session.remoteAddress)));
      case 'busy-recipient':
        ctx.recorder.count(domain, 'deferred');
        return callback(reply(450, BUSY_RECIPIENT));
      case 'defer':
        ctx.recorder.count(domain, 'deferred');
        return callback(reply(452, OVER_QUOTA));
      case 'fail':
        ctx.recorder.count(domain, 'deferred');
        return callback(reply(451, TEMPORARY_PROBLEM));
      case 'greylist':
        ctx.recorder.count(domain, 'deferred');
        return callback(reply(451, GREYLISTED));
      case 'throttle':
        ctx.recorder.count(domain, 'throttled');
        ctx.logger.debug(log, 'smtp: throttled');
        // A 421 makes smtp-server close the connection after the reply, as Gmail does.
        return callback(parseReply(decision.throttleReply));
      case 'accept': {
        if (!enter(domain, session)) {
          ctx.recorder.count(domain, 'throttled');
          // A 421 makes smtp-server close the connection after the reply.
          return callback(reply(421, TOO_MANY_CONNECTIONS));
        }
        const tx = transactions.get(envelope);
        if (tx === undefined) {
          transactions.set(envelope, { domain, latencyMs: decision.latencyMs, dropAfterData: decision.dropAfterData });
        } else {
          tx.latencyMs = Math.max(tx.latencyMs, decision.latencyMs);
          tx.dropAfterData ||= decision.dropAfterData;
        }
        return callback();
      }
    }
  }

  async function onMessage(data: Buffer, oversized: boolean, session: SMTPServerSession): Promise<string | undefined> {
    // smtp-server answers 552 itself (rejectOversized); such a message was not delivered.
    if (oversized) return undefined;
    const arrivedAt = Date.now();
    const { envelope } = session;
    const to = envelope.rcptTo.map((r) => r.address);
    const tx = transactions.get(envelope) ?? { domain: domainOf(to[0] ?? ''), latencyMs: 0, dropAfterData: false };
    const headers = mimeHeaders(data.subarray(0, HEAD_BYTES).toString('utf8'));
    const id = randomBytes(5).toString('hex').toUpperCase();
    // A message of one recipient names it (`X-Sluice-Id`); one shared by several names none.
    const sluiceId = to.length === 1 ? headers.get('x-sluice-id') : undefined;
    const batch = headers.get('x-sluice-batch');
    // What each recipient's mailbox gets: one arrival per accepted RCPT.
    for (const rcpt of to) {
      const { duplicate } = ctx.recorder.accept({
        protocol: 'smtp',
        providerMessageId: id,
        messageId: headers.get('message-id'),
        sluiceId,
        from: envelope.mailFrom === false ? '' : envelope.mailFrom.address,
        to: [rcpt],
        subject: headers.get('subject'),
        domain: domainOf(rcpt),
        arrivedAt,
        tags: { ...(sluiceId === undefined ? {} : { sluice_id: sluiceId }), ...(batch ? { sluice_batch: batch } : {}) },
      });
      ctx.logger.debug({ domain: tx.domain, providerMessageId: id, duplicate, session: session.id }, 'smtp: accepted');
    }
    if (tx.dropAfterData) {
      ctx.recorder.count(tx.domain, 'dropped');
      ctx.logger.debug({ domain: tx.domain, providerMessageId: id }, 'smtp: dropped after DATA');
      destroy(session);
      return undefined;
    }
    await ctx.wait(tx.latencyMs);
    return id;
  }

  function onData(
    stream: SMTPServerDataStream,
    session: SMTPServerSession,
    callback: (err?: Error | null, message?: string) => void,
  ): void {
    const chunks: Buffer[] = [];
    let size = 0;
    stream.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_MESSAGE_BYTES) chunks.push(chunk);
    });
    // Emitted when the client goes away mid-message: nothing was delivered, nobody to answer.
    stream.on('error', () => undefined);
    stream.on('end', () => {
      const { silence } = ctx.scenario();
      if (silence.smtp === 'after-data') {
        // Read in full, never answered: the client cannot tell whether it was delivered.
        ctx.logger.debug({ session: session.id }, 'smtp: silent after DATA');
        if (silence.deliver) void onMessage(Buffer.concat(chunks), stream.sizeExceeded, session).catch(() => undefined);
        return;
      }
      onMessage(Buffer.concat(chunks), stream.sizeExceeded, session).then(
        (id) => {
          done(session);
          callback(null, id === undefined ? undefined : `2.0.0 OK queued as ${id}`);
        },
        (error: unknown) => {
          done(session);
          ctx.logger.error({ err: error }, 'smtp: DATA failed');
          callback(reply(451, TEMPORARY_PROBLEM));
        },
      );
    });
  }

  const requireAuth = options.user !== undefined;
  const server: SMTPServer = new SMTPServer({
    banner: 'Sluice sandbox',
    logger: false,
    disabledCommands: ['STARTTLS'],
    disableReverseLookup: true,
    // hideENHANCEDSTATUSCODES stays at its default (true): our own enhanced codes go out verbatim.
    authOptional: !requireAuth,
    // There is no TLS on loopback, and AUTH must still work.
    allowInsecureAuth: true,
    authRequiredMessage: '5.7.0 Authentication Required',
    size: MAX_MESSAGE_BYTES,
    rejectOversized: true,
    onAuth(auth, _session, callback) {
      if (!requireAuth) return callback(null, { user: auth.username ?? 'anonymous' });
      if (auth.username === options.user && (auth.password ?? '') === (options.password ?? '')) {
        return callback(null, { user: auth.username });
      }
      callback(reply(535, BAD_CREDENTIALS));
    },
    // Silent before DATA: the connection is taken, the banner or the answer to MAIL FROM
    // never sent, so nothing of a message goes out.
    onConnect(session, callback) {
      if (ctx.scenario().silence.smtp === 'before-data') {
        ctx.logger.debug({ session: session.id }, 'smtp: silent, no greeting');
        return;
      }
      callback();
    },
    onMailFrom(_address, session, callback) {
      // A new transaction: whatever the session had in progress was given up (RSET).
      done(session);
      if (ctx.scenario().silence.smtp === 'before-data') {
        ctx.logger.debug({ session: session.id }, 'smtp: silent at MAIL FROM');
        return;
      }
      callback();
    },
    onRcptTo,
    onData,
    onClose: done,
  });
  // A client resetting its connection is routine here (drops do it on purpose).
  const onError = (error: Error): void => ctx.logger.debug({ err: error }, 'smtp: connection error');

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      server.on('error', onError);
      resolve();
    });
  });
  const port = (server.server.address() as AddressInfo).port;

  let closing: Promise<void> | undefined;
  return {
    port,
    close() {
      closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        // smtp-server would otherwise wait (30 s) for clients to say QUIT.
        for (const connection of server.connections as Set<Connection>) connection._socket.destroy();
      });
      return closing;
    },
  };
}
