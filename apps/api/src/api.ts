import { fastify, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { Redis } from 'ioredis';
import { createKeys, receiverFor, type ServiceLogger, type SluiceConfig } from '@sluice/core';
import { connectRoles, createFeedback, createStore, type RedisHealth } from '@sluice/store';
import { createSignals, type Signals } from '@sluice/throttle';
import { answerRequestIds, httpLogging } from '@sluice/ops';
import { httpsGet } from './internal/https-get.js';
import { registerMailgunWebhook } from './webhooks-mailgun.js';
import { readSendgridKey, registerSendgridWebhook } from './webhooks-sendgrid.js';
import { registerSesWebhook } from './webhooks-ses.js';
import { registerIngest, type Ingest } from './ingest/index.js';
import type { IngestRoute } from './ingest/auth.js';

/** Options of {@link createApi}. */
export interface ApiOptions {
  config: SluiceConfig;
  logger: ServiceLogger;
  /**
   * Where each request is logged, one line when it is answered (`request completed`: method,
   * path, status, time, and `reqId`, which every line of the request carries): the process's
   * pino logger, whose redaction applies. @defaultValue none: requests are not logged
   */
  requestLogger?: FastifyBaseLogger | undefined;
  /** A connection of yours (not closed by the API); else one is opened to `redis.url`. */
  redis?: Redis | undefined;
  /**
   * The process's Redis health reporter: it reports the API's own connection, and a request that
   * fails for want of Redis is part of its outage, not a line of its own.
   * @defaultValue none: such failures are logged each
   */
  health?: RedisHealth | undefined;
  /**
   * Fetches an SNS signing certificate (PEM) whose URL passed the checks.
   * @defaultValue an https GET, 5 s timeout, 64 KiB cap, no redirects
   */
  fetchCertificate?: ((url: string) => Promise<string>) | undefined;
  /**
   * Confirms an SNS subscription whose message passed every check.
   * @defaultValue an https GET of the `SubscribeURL`, 5 s timeout
   */
  confirmSubscription?: ((subscribeUrl: string) => Promise<void>) | undefined;
  /**
   * Where bounces and complaints are counted as signals. Yours is not closed by the API (tests
   * pass one to decide when it writes); else one is made on the API's Redis connection,
   * writing once a second, and flushed on close.
   */
  signals?: Signals | undefined;
  /** How long applied events are remembered (and so the oldest SNS message taken). @defaultValue 2 days */
  dedupeTtlSeconds?: number | undefined;
}

/** The HTTP API. */
export interface Api {
  /** The Fastify instance (`server.inject` answers without a socket). */
  readonly server: FastifyInstance;
  /** The HTTP ingest's routes (`/v1`), each with the key scope it needs; filled once the server is ready. */
  readonly ingestRoutes: readonly IngestRoute[];
  /** Listens on `api.host:api.port`; resolves with the address. */
  listen(): Promise<string>;
  /**
   * Stops taking requests, lets those in flight finish, writes the signals counted so far,
   * then closes its own Redis connection.
   */
  close(): Promise<void>;
}

const FETCH = { timeoutMs: 5_000, maxBytes: 64 * 1024 };

/**
 * Creates the API: the ESP webhooks that feed suppression, delivery history and the bounce
 * and complaint signals (per provider, pool, receiver domain, campaign, tenant). Each route
 * verifies before it writes anything; forged, stale, replayed or malformed requests get a
 * 4xx `{ error: { code, message } }` and change nothing. Logs never carry keys or signatures:
 * a request's line has its method, path and status, never its headers, query or body.
 */
export function createApi(options: ApiOptions): Api {
  const { config, logger } = options;
  const sendgridKey = readSendgridKey(config.api.webhooks.sendgrid.publicKey);
  // The queues' Redis and the limiter's, whose signals count bounces and complaints (one
  // connection unless `redis.limiter` names another).
  const connections =
    options.redis === undefined ? connectRoles(config, { maxRetriesPerRequest: 3, health: options.health }) : undefined;
  const redis = options.redis ?? connections!.queues;
  const control = options.redis ?? connections!.limiter;
  const keys = createKeys(config.redis.prefix);
  const dedupeTtlSeconds = options.dedupeTtlSeconds ?? 2 * 86_400;
  const feedback = createFeedback({ redis, keys, softBounces: config.suppression.softBounces, dedupeTtlSeconds });
  const ownsSignals = options.signals === undefined;
  const signals = options.signals ?? createSignals({ redis: control, keys });
  const deps = {
    config: config.api.webhooks,
    logger,
    redis,
    keys,
    feedback,
    store: createStore({ redis, keys }),
    signals,
    poolOf: (provider: string) => config.providers[provider]?.pool ?? 'default',
    receiverOf: (domain: string) => receiverFor(config, domain).name,
    dedupeTtlSeconds,
    eventWindow: () => ({ maxAgeSeconds: dedupeTtlSeconds, maxFutureSeconds: config.api.webhooks.maxAgeSeconds }),
  };

  // The proxies whose X-Forwarded-For is believed (`api.trustProxy`): a request's address.
  const trust = config.api.trustProxy;
  const trustProxy = typeof trust === 'number' ? (_address: string, hop: number) => hop < trust : trust;
  const server = fastify({ trustProxy, ...httpLogging(options.requestLogger) });
  answerRequestIds(server);
  server.setErrorHandler((err: { statusCode?: number; code?: string; message: string }, _req, reply) => {
    const status = err.statusCode !== undefined && err.statusCode >= 400 && err.statusCode < 500 ? err.statusCode : 500;
    if (status === 500) {
      // Refused for want of Redis: the outage is logged once (redis_unavailable), not per request.
      if (!options.health?.explains(err)) logger.error({ event: 'api_error', err: err.message }, 'request failed');
      return reply.code(500).send({ error: { code: 'internal', message: 'the event was not applied; retry later' } });
    }
    // Fastify's own refusals: bad JSON, too large, unsupported media type.
    const code = status === 400 ? 'malformed' : status === 413 ? 'too_large' : (err.code ?? 'bad_request');
    return reply.code(status).send({ error: { code, message: err.message } });
  });
  server.setNotFoundHandler((req, reply) =>
    reply.code(404).send({ error: { code: 'not_found', message: `no route ${req.method} ${req.url.split('?')[0]}` } }),
  );

  // One encapsulated scope per route: each reads its body its own way (raw text, raw bytes, JSON).
  void server.register(async (app) =>
    registerSesWebhook(app, {
      ...deps,
      fetchCertificate: options.fetchCertificate ?? ((url) => httpsGet(url, FETCH)),
      confirmSubscription: options.confirmSubscription ?? (async (url) => void (await httpsGet(url, FETCH))),
      maxAgeSeconds: dedupeTtlSeconds,
    }),
  );
  void server.register(async (app) => registerSendgridWebhook(app, { ...deps, publicKey: sendgridKey }));
  void server.register(async (app) => registerMailgunWebhook(app, deps));
  // The HTTP ingest (`/v1`): every route needs a key (docs/design/tenants-and-keys.md).
  const ingest: Ingest = registerIngest(server, { config, logger, redis, limiterRedis: control, keys });

  let closed = false;
  return {
    server,
    ingestRoutes: ingest.routes,
    async listen() {
      return server.listen({ host: config.api.host, port: config.api.port });
    },
    async close() {
      if (closed) return;
      closed = true;
      await server.close();
      await ingest.close();
      // Counted in memory until now: written before the connection goes.
      if (ownsSignals) {
        try {
          await signals.close();
        } catch (err) {
          logger.error({ event: 'signals_flush_failed', err: (err as Error).message }, 'signals not written');
        }
      }
      await connections?.quit();
    },
  };
}
