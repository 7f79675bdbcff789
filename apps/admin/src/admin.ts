import { readFileSync } from 'node:fs';
import { fastify, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { Redis } from 'ioredis';
import { createKeys, SluiceError, type ServiceLogger, type SluiceConfig } from '@sluice/core';
import {
  answerRequestIds,
  createOverrides,
  createProcessRegistry,
  createStatus,
  httpLogging,
  registerRedisUp,
} from '@sluice/ops';
import { connectRoles, createCampaigns, createQueues, createStore, type RedisHealth } from '@sluice/store';
import { registerAuth } from './auth.js';
import { registerBoard } from './board.js';

/** Options of {@link createAdmin}. */
export interface AdminOptions {
  config: SluiceConfig;
  logger: ServiceLogger;
  /**
   * Where each request is logged, one line when it is answered (`request completed`: method,
   * path, status, time, and `reqId`, which every line of the request carries): the process's
   * pino logger, whose redaction applies. @defaultValue none: requests are not logged
   */
  requestLogger?: FastifyBaseLogger | undefined;
  /** A connection of yours (not closed by the app); else one is opened to `redis.url`. */
  redis?: Redis | undefined;
  /**
   * The process's Redis health reporter: it reports the app's own connection, and a request,
   * refresh or scrape that fails for want of Redis is part of its outage, not a line of its own.
   * @defaultValue none: such failures are logged each
   */
  health?: RedisHealth | undefined;
  /** How often the campaign list of the board is read again. @defaultValue `5000` */
  refreshMs?: number | undefined;
}

/** The admin app. */
export interface Admin {
  /** The Fastify instance (`server.inject` answers without a socket). */
  readonly server: FastifyInstance;
  /** Every route it serves (method and URL), Bull Board's included, once `ready()` has run. */
  readonly routes: readonly { method: string; url: string }[];
  /** Registers every route (Bull Board's are registered as a plugin). */
  ready(): Promise<void>;
  /** Listens on `admin.host:admin.port` (or the given port); resolves with the address. */
  listen(port?: number): Promise<string>;
  /** Stops taking requests, lets those in flight finish, closes queue handles and its own Redis. */
  close(): Promise<void>;
}

const PUBLIC = new URL('./public/', import.meta.url);
const CAMPAIGN_ID = /^[A-Za-z0-9_-]{1,64}$/;

/**
 * Creates the admin app: Bull Board at `/board`, the ops dashboard at `/dashboard`, and a
 * JSON API (`/api/status`, `/api/campaigns/:id/pause|resume`, `/api/overrides`), all behind
 * authentication (see `registerAuth`). Throws `invalid_config` (`admin.tokens`) when there
 * are no tokens, unless `admin.devNoAuth` is set on a loopback host.
 */
export function createAdmin(options: AdminOptions): Admin {
  const { config, logger } = options;
  const server = fastify({ trustProxy: false, ...httpLogging(options.requestLogger) });
  answerRequestIds(server);
  const routes: { method: string; url: string }[] = [];
  server.addHook('onRoute', (r) => {
    for (const method of ([] as string[]).concat(r.method)) routes.push({ method, url: r.url });
  });
  // First, before any route: the hook then covers every route and plugin registered after.
  registerAuth(server, config.admin);

  // The queues' Redis and the limiter's (one connection unless `redis.limiter` names another).
  const connections =
    options.redis === undefined ? connectRoles(config, { maxRetriesPerRequest: 3, health: options.health }) : undefined;
  const { health } = options;
  const redis = options.redis ?? connections!.queues;
  const control = options.redis ?? connections!.limiter;
  const keys = createKeys(config.redis.prefix);
  const store = createStore({ redis, keys });
  const status = createStatus({ config, redis, control, keys });
  const queues = createQueues({ redis, keys, partitions: config.redis.dispatchPartitions });
  const campaigns = createCampaigns({ redis, keys, queues, store, logger });
  const board = registerBoard(server, { redis, keys, queues, campaigns, logger });

  server.setErrorHandler((err: { statusCode?: number; code?: string; message: string }, _req, reply) => {
    if (err instanceof SluiceError && err.code === 'unknown_campaign') {
      return reply.code(404).send({ error: { code: err.code, message: err.message } });
    }
    if (err instanceof SluiceError && err.code === 'campaign_cancelled') {
      return reply.code(409).send({ error: { code: err.code, message: err.message } });
    }
    const code = err.statusCode !== undefined && err.statusCode >= 400 && err.statusCode < 500 ? err.statusCode : 500;
    // Failed for want of Redis: the outage is logged once (redis_unavailable), not per request.
    if (code === 500 && !health?.explains(err))
      logger.error({ event: 'admin_error', err: err.message }, 'request failed');
    return reply.code(code).send({
      error: {
        code: code === 500 ? 'internal' : (err.code ?? 'bad_request'),
        message: code === 500 ? 'internal error' : err.message,
      },
    });
  });

  const page = (file: string): string => readFileSync(new URL(file, PUBLIC), 'utf8');
  const html = page('dashboard.html');
  const scripts = new Map(['dashboard-parts.js', 'dashboard.js'].map((f) => [f, page(f)]));
  server.get('/', async (_req, reply) => reply.redirect('/dashboard'));
  server.get('/dashboard', async (_req, reply) =>
    reply.type('text/html; charset=utf-8').header('cache-control', 'no-store').send(html),
  );
  for (const [file, script] of scripts) {
    server.get(`/dashboard/${file}`, async (_req, reply) =>
      reply.type('text/javascript; charset=utf-8').header('cache-control', 'no-store').send(script),
    );
  }

  server.get('/api/status', async () => status.snapshot());
  // This process's own metrics; the fleet's figures are the leading scheduler's
  // (docs/operations/metrics-and-logs.md). Prometheus scrapes with the bearer token like any
  // other client.
  const registry = createProcessRegistry();
  if (health) registerRedisUp(registry, health);
  server.get('/metrics', async (_req, reply) =>
    reply.header('content-type', registry.contentType).send(await registry.metrics()),
  );
  const overrides = createOverrides({ config, redis: control, keys });
  server.get('/api/overrides', async () => overrides.list());
  for (const action of ['pause', 'resume'] as const) {
    server.post<{ Params: { id: string } }>(`/api/campaigns/:id/${action}`, async (req) => {
      const { id } = req.params;
      if (!CAMPAIGN_ID.test(id))
        throw new SluiceError('unknown_campaign', `no campaign with id ${id}`, { path: 'campaignId' });
      await campaigns[action](id, { actor: req.actor });
      await board.refresh();
      return { id, paused: action === 'pause', actor: req.actor };
    });
  }

  const refreshMs = options.refreshMs ?? 5_000;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> = Promise.resolve();
  let started: Promise<void> | undefined;
  const ready = (): Promise<void> =>
    (started ??= (async () => {
      await board.refresh();
      await server.ready();
      timer = setInterval(() => {
        running = board.refresh().catch((err: Error) => {
          if (!health?.explains(err))
            logger.error({ event: 'admin_refresh_failed', err: err.message }, 'campaign list not refreshed');
        });
      }, refreshMs);
      timer.unref();
    })());

  let closed = false;
  return {
    server,
    routes,
    ready,
    async listen(port) {
      await ready();
      return server.listen({ host: config.admin.host, port: port ?? config.admin.port });
    },
    async close() {
      if (closed) return;
      closed = true;
      if (timer) clearInterval(timer);
      await server.close();
      await running;
      await queues.close();
      await status.close();
      await connections?.quit();
    },
  };
}
