import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { pino, type Logger } from 'pino';
import type { Arrival, SandboxContext } from './internal/context.js';
import { readBody, sendSesError } from './internal/http.js';
import { inspect } from './internal/inspect.js';
import { Policy } from './internal/policy.js';
import { checkCredential, getAccount, sendEmail } from './internal/ses-v2.js';
import { Recorder, type AcceptedMessage, type SandboxStats } from './recorder.js';
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
  /** Where request logs go. @defaultValue a silent logger */
  logger?: Logger;
}

/** A running sandbox ESP. */
export interface Sandbox {
  /** Base URL for the SDK's `endpoint`, e.g. `http://127.0.0.1:4566`. */
  readonly url: string;
  /** The port actually bound. */
  readonly port: number;
  /** Accepted messages in arrival order. */
  accepted(): AcceptedMessage[];
  /** Outcome counts since start or the last reset. */
  stats(): SandboxStats;
  /** Validates and installs a scenario; every rate bucket starts full again. @throws `ScenarioError` */
  setScenario(scenario: unknown): void;
  /** Forgets records, counts and bucket state; keeps the scenario. */
  reset(): void;
  /** Stops listening, ends delayed answers and destroys open (keep-alive) sockets. Idempotent. */
  close(): Promise<void>;
}

/** An address a client can connect to, for URLs: wildcard binds are reached on loopback. */
function urlHost(host: string): string {
  if (host === '0.0.0.0' || host === '') return '127.0.0.1';
  if (host === '::') return '[::1]';
  return host.includes(':') ? `[${host}]` : host;
}

/**
 * Starts a local ESP that speaks the SES v2 wire API (SendEmail, GetAccount) and behaves
 * per recipient domain as the scenario says: latency, rate limits (429) and hard bounces.
 *
 * @throws `ScenarioError` when `options.scenario` is invalid, or the listen error.
 */
export async function createSandbox(options: SandboxOptions = {}): Promise<Sandbox> {
  const host = options.host ?? '127.0.0.1';
  const logger = options.logger ?? pino({ level: 'silent' });
  const recorder = new Recorder();
  let policy = new Policy(parseScenario(options.scenario));
  // Pending latency waits, so close() can end them instead of leaving timers behind.
  const waits = new Map<NodeJS.Timeout, () => void>();
  let closing: Promise<void> | undefined;

  const ctx: SandboxContext = {
    logger,
    recorder,
    accessKeyId: options.accessKeyId,
    policy: () => policy,
    scenario: () => policy.scenario,
    setScenario(input) {
      policy = new Policy(parseScenario(input));
      logger.info('scenario replaced');
    },
    reset() {
      recorder.reset();
      policy.resetBuckets();
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
    if (!path.startsWith('/_sandbox/') && !checkCredential(ctx, req, res)) return;
    if (route === 'POST /v2/email/outbound-emails') return sendEmail(ctx, arrival, res);
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

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  const url = `http://${urlHost(host)}:${port}`;
  logger.info({ url }, 'sandbox listening');

  return {
    url,
    port,
    accepted: () => recorder.accepted(),
    stats: () => recorder.stats(),
    setScenario: (scenario) => ctx.setScenario(scenario),
    reset: () => ctx.reset(),
    close() {
      closing ??= new Promise<void>((resolve) => {
        for (const [timer, release] of waits) {
          clearTimeout(timer);
          release();
        }
        waits.clear();
        server.close(() => resolve());
        // Keep-alive sockets (and answers still being written) would hold close() open.
        server.closeAllConnections();
        logger.info({ url }, 'sandbox closed');
      });
      return closing;
    },
  };
}
