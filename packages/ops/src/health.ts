import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { SluiceConfig } from '@sluice/core';
import { connectRoles, type RoleConnections } from '@sluice/store';

/** How long a readiness check waits for each Redis's PING. */
const PING_TIMEOUT_MS = 1_000;

/** Options of {@link startHealth}. */
export interface HealthOptions {
  config: SluiceConfig;
  /** The port (`health.port`, `SLUICE_HEALTH_PORT`; 0: any free one). */
  port: number;
  /** What `/readyz` adds to its answer, read at each request (a scheduler's lease: `{ leading }`). */
  info?: () => Record<string, unknown>;
}

/** A process's `/healthz` and `/readyz` (see {@link startHealth}). */
export interface HealthServer {
  /** `http://host:port`. */
  readonly url: string;
  /** The process is started: `/readyz` answers from its checks from now on. */
  started(): void;
  /** The process is stopping: `/readyz` answers 503 `draining` from now on. */
  drain(): void;
  /** Stops listening and closes its Redis connections. */
  close(): Promise<void>;
}

/** `/readyz`'s answer: ready, or not with a reason per failed check. */
export interface Readiness {
  ready: boolean;
  /** Each check's state: `ok`, or why not. */
  checks: Record<string, string>;
  [info: string]: unknown;
}

/** Resolves `ok`, or why not: no answer within the timeout, or the error. */
async function ping(redis: RoleConnections['queues']): Promise<string> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<string>((resolve) => {
    timer = setTimeout(() => resolve(`no answer within ${PING_TIMEOUT_MS} ms`), PING_TIMEOUT_MS);
  });
  try {
    return await Promise.race([
      redis.ping().then(
        () => 'ok',
        (err: unknown) => `unreachable: ${err instanceof Error ? err.message : String(err)}`,
      ),
      late,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Serves a process's health on `health.host:port` (loopback by default), apart from its
 * other ports so a probe needs no credentials and no webhook or admin route is exposed:
 * - `GET /healthz`: 200 while the event loop answers (liveness);
 * - `GET /readyz`: 200 once the process is started, each of its Redis roles (queues, and the
 *   limiter's when apart) answers a PING within 1 s, and it is not draining; else 503. The body
 *   is JSON: `{ ready, checks: { started, draining, redis.queues, redis.limiter? }, ...info }`.
 * Its Redis connections are its own (producer profile, no offline queue), so a check never
 * waits behind the process's work.
 */
export async function startHealth(options: HealthOptions): Promise<HealthServer> {
  const { config } = options;
  const roles = connectRoles(config, { maxRetriesPerRequest: 1 });
  // Their errors are the pings' answers; the process's own connections report outages.
  for (const redis of new Set([roles.queues, roles.limiter])) redis.on('error', () => undefined);
  let isStarted = false;
  let draining = false;

  async function readiness(): Promise<Readiness> {
    const checks: Record<string, string> = {
      started: isStarted ? 'ok' : 'starting',
      draining: draining ? 'the process is stopping' : 'ok',
    };
    const [queues, limiter] = await Promise.all([
      ping(roles.queues),
      roles.separate ? ping(roles.limiter) : Promise.resolve(undefined),
    ]);
    checks['redis.queues'] = queues;
    if (limiter !== undefined) checks['redis.limiter'] = limiter;
    return { ready: Object.values(checks).every((c) => c === 'ok'), checks, ...options.info?.() };
  }

  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0];
    const json = (status: number, body: unknown): void => {
      res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' });
      res.end(`${JSON.stringify(body)}\n`);
    };
    if (req.method !== 'GET' && req.method !== 'HEAD') return json(405, { error: 'GET /healthz or /readyz' });
    if (path === '/healthz') return json(200, { live: true });
    if (path !== '/readyz') return json(404, { error: 'not found: GET /healthz or /readyz' });
    readiness().then(
      (r) => json(r.ready ? 200 : 503, r),
      (err: unknown) => json(503, { ready: false, checks: { health: String(err) } }),
    );
  });
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(options.port, config.health.host, () => {
        server.off('error', reject);
        resolve();
      });
    });
  } catch (err) {
    roles.queues.disconnect();
    roles.limiter.disconnect();
    throw err;
  }
  const { address, port } = server.address() as AddressInfo;
  let closed: Promise<void> | undefined;
  return {
    url: `http://${address.includes(':') ? `[${address}]` : address}:${port}`,
    started: () => void (isStarted = true),
    drain: () => void (draining = true),
    close() {
      closed ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        // A probe may hold its connection open between checks.
        server.closeAllConnections();
      }).then(() => {
        roles.queues.disconnect();
        roles.limiter.disconnect();
      });
      return closed;
    },
  };
}
