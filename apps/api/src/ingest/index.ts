import { fastify, type FastifyInstance } from 'fastify';
import { Redis } from 'ioredis';
import { createKeys, type Keys, type ServiceLogger, type SluiceConfig } from '@sluice/core';
import { createClient } from '@sluice/client';
import { createAuthenticator, createIdempotency, createPlans, createStorageGuard } from '@sluice/store';
import { requireKeys, type IngestRoute } from './auth.js';
import { useIdempotency } from './idempotency.js';
import { registerMessageRoutes } from './messages.js';
import { registerCampaignRoutes } from './campaigns.js';
import { registerOutcomeRoutes } from './outcomes.js';
import { registerTenantRoutes } from './tenant.js';
import { documentRoutes, useOpenApi } from './openapi.js';

/** What the ingest needs of the api. */
export interface IngestDeps {
  config: SluiceConfig;
  logger: ServiceLogger;
  /** The api's connection to the queues' Redis; not closed here. */
  redis: Redis;
  /** Its connection to the limiter's Redis (plan-cap counters). @defaultValue `redis` */
  limiterRedis?: Redis;
  keys: Keys;
}

/** The ingest's own resources. */
export interface Ingest {
  /** Every `/v1` route with its scope (filled once the server is ready). */
  readonly routes: readonly IngestRoute[];
  /** Closes the client it sends with (not the connection, which is the api's). */
  close(): Promise<void>;
}

/**
 * Registers the `/v1` routes in a scope of their own whose every route needs a key with its
 * scope. Mail goes in through `@sluice/client` on the api's connection, so it is checked and
 * written exactly as a backend's `send` is. A fleet not running yet is warned of, not refused:
 * the mail waits for it.
 */
export function registerIngest(server: FastifyInstance, deps: IngestDeps): Ingest {
  const { config, logger, redis, keys } = deps;
  const client = createClient({
    redis,
    prefix: config.redis.prefix,
    fleetCheck: 'warn',
    onWarning: (warning) => logger.info({ event: 'ingest_warning', code: warning.code }, warning.message),
  });
  const authenticator = createAuthenticator({ redis, keys, pepper: config.api.keys.pepper });
  const routes: IngestRoute[] = [];
  useOpenApi(server);
  void server.register(async (app) => {
    requireKeys(app, authenticator, routes);
    documentRoutes(app);
    useIdempotency(app, createIdempotency({ redis, keys }));
    const plans = createPlans({ redis, limiterRedis: deps.limiterRedis, keys, config });
    const gate = { authenticator, storage: createStorageGuard({ redis, config }), plans };
    registerMessageRoutes(app, { client, gate });
    registerCampaignRoutes(app, { client, config, redis, keys, gate });
    registerOutcomeRoutes(app, { client });
    registerTenantRoutes(app, { redis, keys, pepper: config.api.keys.pepper });
  });
  return { routes, close: () => client.close() };
}

/**
 * The OpenAPI document of the `/v1` routes as a server with `config` serves it, made without
 * Redis (the routes are registered, never called): what `npm run docs:reference` writes.
 */
export async function openApiDocument(config: SluiceConfig): Promise<unknown> {
  const server = fastify();
  const redis = new Redis({ lazyConnect: true, enableOfflineQueue: false });
  const quiet = { info: () => {}, error: () => {}, fatal: () => {} };
  const ingest = registerIngest(server, { config, logger: quiet, redis, keys: createKeys(config.redis.prefix) });
  try {
    await server.ready();
    return server.swagger();
  } finally {
    await ingest.close();
    await server.close();
    redis.disconnect();
  }
}
