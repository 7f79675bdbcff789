import { createServer, ServerResponse, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { pino, type Logger } from 'pino';
import type { Arrival, SandboxContext, WebhookKeys } from './internal/context.js';
import { readBody, sendSesError } from './internal/http.js';
import { inspect } from './internal/inspect.js';
import { mailgunRoute, mailgunSend } from './internal/mailgun.js';
import { Policy } from './internal/policy.js';
import { sendgridSend } from './internal/sendgrid.js';
import { createTemplate, sendBulkEmail, templateByName } from './internal/ses-bulk.js';
import { checkCredential, getAccount, sendEmail, sesMessageId } from './internal/ses-v2.js';
import { startSmtp, type SmtpSink } from './internal/smtp.js';
import {
  SNS_CERT_PATH,
  createMailgunSigningKey,
  createSendgridKeys,
  loadSnsIdentity,
  serveSnsCertificate,
  type SnsIdentity,
} from './internal/webhook-keys.js';
import { createReporter } from './internal/webhooks.js';
import { Recorder, type AcceptedMessage, type Keep, type SandboxStats, type WebhookReport } from './recorder.js';
import { parseScenario } from './scenario.js';

/** Options of {@link createSandbox}. */
export interface SandboxOptions {
  /** TCP port; `0` picks a free one. @defaultValue `0` */
  port?: number;
  /** Interface to listen on. @defaultValue `'127.0.0.1'` */
  host?: string;
  /** A `Scenario` or raw scenario input (validated). @defaultValue `{}`: no limits, bounces or latency */
  scenario?: unknown;
  /**
   * When set, SES requests whose SigV4 `Credential=` names another key are answered 403
   * `UnrecognizedClientException`. The `/_sandbox/*` endpoints are never checked.
   * @defaultValue unset: any credentials pass
   */
  accessKeyId?: string;
  /**
   * When set, SES requests must also carry it as `X-Amz-Security-Token` (temporary
   * credentials from STS, a role or `AWS_SESSION_TOKEN`), or are answered 403.
   * @defaultValue unset: none needed
   */
  sessionToken?: string;
  /**
   * When set, SendGrid requests must carry `Authorization: Bearer <key>` or are answered 401.
   * @defaultValue unset: any key passes
   */
  sendgridApiKey?: string;
  /**
   * When set, Mailgun requests must carry Basic auth `api:<key>` or are answered 401 `Forbidden`.
   * @defaultValue unset: any key passes
   */
  mailgunApiKey?: string;
  /** SMTP port, on the same host; `0` picks a free one. @defaultValue `0` */
  smtpPort?: number;
  /**
   * When set, SMTP clients must AUTH (PLAIN or LOGIN, no TLS) as this user with `smtpPassword`
   * before MAIL FROM: `530` without, `535 5.7.8` with wrong credentials.
   * @defaultValue unset: AUTH optional, any credentials pass
   */
  smtpUser?: string;
  /** The password of `smtpUser`. @defaultValue `''` */
  smtpPassword?: string;
  /** Where request logs go. @defaultValue a silent logger */
  logger?: Logger;
  /**
   * What to keep of each accepted message: all of it, for `accepted()`, or (`'counts'`, for
   * millions) only the counts, arrival times and duplicate keys `stats()` reports.
   * @defaultValue `'messages'`
   */
  keep?: Keep;
}

/** A running sandbox ESP. */
export interface Sandbox {
  /** Base URL for the SDK's `endpoint`, e.g. `http://127.0.0.1:4566`. */
  readonly url: string;
  /** The HTTP port actually bound. */
  readonly port: number;
  /** The SMTP port actually bound, on the same host. */
  readonly smtpPort: number;
  /** Accepted messages in arrival order. @throws when started with `keep: 'counts'` */
  accepted(): AcceptedMessage[];
  /** Outcome counts since start or the last reset. */
  stats(): SandboxStats;
  /** Every webhook report decided since start or the last reset, with how its posts went. */
  webhookReports(): WebhookReport[];
  /**
   * Validates and installs a scenario; every rate bucket starts full again and greylisting
   * forgets the pairs it saw. @throws `ScenarioError`
   */
  setScenario(scenario: unknown): void;
  /**
   * The keys to verify the sandbox's webhooks with, as each ESP shows them (also at
   * `GET /_sandbox/webhook-keys`). Made at start; they live as long as the sandbox.
   */
  webhookKeys(): WebhookKeys;
  /** Forgets records, counts, bucket and greylisting state; keeps the scenario. */
  reset(): void;
  /**
   * Stops listening (HTTP and SMTP), ends delayed answers, cancels webhook reports not yet
   * posted and destroys open sockets. Idempotent.
   */
  close(): Promise<void>;
}

/** An address a client can connect to, for URLs: wildcard binds are reached on loopback. */
function urlHost(host: string): string {
  if (host === '0.0.0.0' || host === '') return '127.0.0.1';
  if (host === '::') return '[::1]';
  return host.includes(':') ? `[${host}]` : host;
}

/**
 * The SMTP side and, with an SNS identity, the HTTPS server of its signing certificate; on a
 * failure whatever started (the HTTP `server` included) is closed before the error is thrown.
 */
async function startSmtpAndCertificate(
  ctx: SandboxContext,
  options: SandboxOptions,
  host: string,
  sns: SnsIdentity | undefined,
  server: Server,
): Promise<{ smtp: SmtpSink; certServer: Awaited<ReturnType<typeof serveSnsCertificate>> | undefined }> {
  let smtp: SmtpSink;
  try {
    smtp = await startSmtp(ctx, {
      port: options.smtpPort ?? 0,
      host,
      user: options.smtpUser,
      password: options.smtpPassword,
    });
  } catch (error) {
    await new Promise((resolve) => server.close(resolve));
    throw error;
  }
  try {
    const certServer = sns === undefined ? undefined : await serveSnsCertificate(sns, host);
    return { smtp, certServer };
  } catch (error) {
    await Promise.all([new Promise((resolve) => server.close(resolve)), smtp.close()]);
    throw error;
  }
}

/** Listens on `port` (0: any free one) at `host`; rejects with the listen error. */
function listen(server: Server, port: number, host: string): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

/** The SNS identity SES reports are signed with, or none (logged: only SES reports need it). */
async function snsIdentityOrNone(logger: Logger): Promise<SnsIdentity | undefined> {
  try {
    return await loadSnsIdentity();
  } catch (error) {
    logger.warn({ err: error }, 'no SNS signing certificate: SES webhook reports will fail');
    return undefined;
  }
}

/** Which ESP's send a request is, by its route (`METHOD /path`); undefined for any other. */
function espOf(route: string, mailgun: boolean): 'sendgrid' | 'mailgun' | 'ses' | undefined {
  if (route === 'POST /v3/mail/send') return 'sendgrid';
  if (mailgun) return 'mailgun';
  if (route === 'POST /v2/email/outbound-emails' || route === 'POST /v2/email/outbound-bulk-emails') return 'ses';
  return undefined;
}

/**
 * Starts a local ESP on loopback that speaks four wire protocols: SES v2 (SendEmail,
 * GetAccount, email templates and SendBulkEmail, answered per entry), SendGrid v3 (`POST /v3/mail/send`) and Mailgun v3 (`POST /v3/{domain}/messages`
 * and `…/messages.mime`) on one HTTP port, and SMTP on another. Every protocol behaves per
 * recipient domain as the scenario says (latency, rate limits, bounces, blocks, deferrals,
 * failures, greylisting, dropped connections), sharing one rate bucket per domain. What
 * receivers do later (bounce and complaint rates) is posted to the scenario's webhook URLs,
 * signed as SNS, SendGrid and Mailgun sign, with keys the sandbox makes at start.
 *
 * @throws `ScenarioError` when `options.scenario` is invalid, or the listen error.
 */
export async function createSandbox(options: SandboxOptions = {}): Promise<Sandbox> {
  const host = options.host ?? '127.0.0.1';
  const logger = options.logger ?? pino({ level: 'silent' });
  const recorder = new Recorder(options.keep);
  let policy = new Policy(parseScenario(options.scenario));
  // Pending latency waits, so close() can end them instead of leaving timers behind.
  const waits = new Map<NodeJS.Timeout, () => void>();
  let closing: Promise<void> | undefined;
  const sendgridKeys = createSendgridKeys();
  const mailgunSigningKey = createMailgunSigningKey();
  const sns = await snsIdentityOrNone(logger);
  let snsCertUrl: string | undefined;
  const webhookKeys = (): WebhookKeys => ({
    sendgridPublicKey: sendgridKeys.publicKey,
    mailgunSigningKey,
    snsCertificate: sns?.certificate,
    snsCertUrl,
  });
  // The URLs are known once the servers listen; reports come only after an accepted message.
  const reporter = createReporter({
    logger,
    recorder,
    scenario: () => policy.scenario,
    signers: { sns, sendgrid: sendgridKeys, mailgunSigningKey },
    snsCertUrl: () => snsCertUrl,
    baseUrl: () => url,
  });

  const ctx: SandboxContext = {
    logger,
    recorder,
    templates: new Map(),
    accessKeyId: options.accessKeyId,
    sessionToken: options.sessionToken,
    sendgridApiKey: options.sendgridApiKey,
    mailgunApiKey: options.mailgunApiKey,
    policy: () => policy,
    scenario: () => policy.scenario,
    report: (message, bounce) => reporter.accepted(message, bounce),
    webhookKeys,
    setScenario(input) {
      policy = new Policy(parseScenario(input));
      logger.info('scenario replaced');
    },
    reset() {
      recorder.reset();
      policy.resetState();
    },
    wait(ms) {
      if (ms <= 0 || closing !== undefined) return Promise.resolve();
      return new Promise((resolve) => {
        const timer = setTimeout(() => {
          waits.delete(timer);
          resolve();
        }, ms);
        waits.set(timer, resolve);
      });
    },
  };

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const { body, tooLarge } = await readBody(req);
    // Taken once the whole body is in: that is when SES would see the request.
    const arrival: Arrival = { body, tooLarge, arrivedAt: Date.now(), arrivedMono: performance.now() };
    const path = new URL(req.url ?? '/', 'http://sandbox').pathname;
    const route = `${req.method ?? 'GET'} ${path}`;
    logger.debug({ route }, 'request');
    if (path.startsWith('/_sandbox/') && inspect(ctx, route, arrival, res)) return;
    const mailgun = mailgunRoute(req.method ?? 'GET', path);
    const esp = espOf(route, mailgun !== undefined);
    const { silence } = policy.scenario;
    const silent = esp !== undefined && silence.http.includes(esp);
    if (silent) {
      logger.debug({ route }, 'silent: request read, never answered');
      if (!silence.deliver) return;
    }
    // Silent: handled as usual into an answer nobody sends (the message may be delivered, the
    // sender never hears); the real response stays open until the client gives up.
    const answer = silent ? new ServerResponse(req) : res;
    // SendGrid and Mailgun check their own credentials, before SES's SigV4 check would refuse them.
    if (esp === 'sendgrid') return sendgridSend(ctx, req, arrival, answer);
    if (mailgun !== undefined) return mailgunSend(ctx, req, arrival, answer, mailgun);
    if (!path.startsWith('/_sandbox/') && !checkCredential(ctx, req, answer)) return;
    if (route === 'POST /v2/email/outbound-bulk-emails') return sendBulkEmail(ctx, arrival, answer, sesMessageId);
    if (esp === 'ses') return sendEmail(ctx, arrival, answer);
    if (route === 'POST /v2/email/templates') return createTemplate(ctx, arrival, res);
    const template = /^\/v2\/email\/templates\/([^/]+)$/.exec(path);
    if (template && (req.method === 'GET' || req.method === 'DELETE')) {
      return templateByName(ctx, req.method, decodeURIComponent(template[1]!), res);
    }
    if (route === 'GET /v2/email/account') return getAccount(ctx, res);
    sendSesError(res, 404, 'NotFoundException', `No route for ${route}.`);
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      // A client that hangs up mid-body lands here too; there is no one left to answer.
      if (req.destroyed && res.destroyed) return;
      logger.error({ err: error }, 'request failed');
      if (!res.headersSent) sendSesError(res, 500, 'InternalServiceErrorException', 'Sandbox internal error.');
      else res.destroy();
    });
  });

  await listen(server, options.port ?? 0, host);
  const port = (server.address() as AddressInfo).port;
  const url = `http://${urlHost(host)}:${port}`;

  const { smtp, certServer } = await startSmtpAndCertificate(ctx, options, host, sns, server);
  if (certServer !== undefined) snsCertUrl = `https://${urlHost(host)}:${certServer.port}${SNS_CERT_PATH}`;
  logger.info({ url, smtpPort: smtp.port }, 'sandbox listening');

  return {
    url,
    port,
    smtpPort: smtp.port,
    accepted: () => recorder.accepted(),
    webhookReports: () => recorder.reports(),
    stats: () => recorder.stats(),
    setScenario: (scenario) => ctx.setScenario(scenario),
    webhookKeys,
    reset: () => ctx.reset(),
    close() {
      closing ??= (async () => {
        for (const [timer, release] of waits) {
          clearTimeout(timer);
          release();
        }
        waits.clear();
        const http = new Promise<void>((resolve) => server.close(() => resolve()));
        // Keep-alive sockets (and answers still being written) would hold close() open.
        server.closeAllConnections();
        const tls = new Promise<void>((resolve) => (certServer ? certServer.server.close(() => resolve()) : resolve()));
        certServer?.server.closeAllConnections();
        await Promise.all([http, tls, smtp.close(), reporter.close()]);
        logger.info({ url }, 'sandbox closed');
      })();
      return closing;
    },
  };
}
