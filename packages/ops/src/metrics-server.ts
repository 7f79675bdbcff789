import { collectDefaultMetrics, Registry } from 'prom-client';
import type { SluiceConfig } from '@sluice/core';
import type { RedisHealth } from '@sluice/store';
import { createMetricsHandler, serveMetrics, type MetricsHandler } from './metrics.js';

/**
 * prom-client's gauges named like counters (`promtool check metrics` refuses a `_total`
 * suffix on a gauge): their by-type siblings (`nodejs_active_handles{type}`…) stay, and
 * `sum()` of those is the same figure.
 */
const MISNAMED_DEFAULTS = [
  'nodejs_active_handles_total',
  'nodejs_active_requests_total',
  'nodejs_active_resources_total',
];

/** A registry with this process's own `process_*` and `nodejs_*` metrics on it (prom-client's defaults, those promtool accepts). */
export function createProcessRegistry(): Registry {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  for (const name of MISNAMED_DEFAULTS) registry.removeSingleMetric(name);
  return registry;
}

/**
 * `sluice_redis_up` on `registry`: whether a connection of this process is ready, as its
 * health reporter knows it (no Redis call when scraped).
 */
export function registerRedisUp(registry: Registry, health: Pick<RedisHealth, 'up'>): void {
  const help = 'Whether this process has a ready Redis connection (1) or waits for Redis (0).';
  registry.registerMetric({
    name: 'sluice_redis_up',
    help,
    type: 'gauge',
    aggregator: 'sum',
    get: () => ({
      name: 'sluice_redis_up',
      help,
      type: 'gauge',
      aggregator: 'sum',
      values: [{ labels: {}, value: health.up ? 1 : 0 }],
    }),
    reset() {},
  } as never);
}

/**
 * `sluice_sandbox_provider{provider}` on `registry`: 1 for each provider of this process's
 * config that sends to the local sandbox (its mail never leaves); absent when none does.
 */
export function registerSandboxProviders(registry: Registry, config: SluiceConfig): void {
  const help = "This process's providers that send to the local sandbox (mail that never leaves): 1 each.";
  const values = Object.entries(config.providers)
    .filter(([, p]) => p.sandbox)
    .map(([provider]) => ({ labels: { provider }, value: 1 }));
  const family = { name: 'sluice_sandbox_provider', help, type: 'gauge', aggregator: 'max', values };
  registry.registerMetric({ ...family, get: () => family, reset() {} } as never);
}

/** Options of {@link startMetrics}. */
export interface StartMetricsOptions {
  config: SluiceConfig;
  port: number;
  logger: { info(obj: object, msg: string): void; warn(obj: object, msg: string): void };
  /** The process's Redis health reporter: `sluice_redis_up`, and a scrape that fails for want of Redis is its outage, not a line. */
  health?: RedisHealth | undefined;
  /** A registry with this process's own metrics on it (a worker's delivery counters). @defaultValue {@link createProcessRegistry} */
  registry?: Registry | undefined;
  /**
   * Given by schedulers: whether this one leads. Only the leader reads the fleet's status
   * from Redis and serves its figures (`sluice_leader` says which). @defaultValue none: no fleet figures
   */
  leading?: (() => boolean) | undefined;
}

/**
 * A process's `/metrics` on `config.metrics.host:port`: its own metrics (process, Redis
 * connection, a worker's counters) and, on a scheduler, the fleet's figures while it leads.
 * Closes what it opened if it cannot listen.
 */
export async function startMetrics(options: StartMetricsOptions): Promise<{ close(): Promise<void> }> {
  const { config, port, logger, health, leading } = options;
  const registry = options.registry ?? createProcessRegistry();
  if (health) registerRedisUp(registry, health);
  registerSandboxProviders(registry, config);
  const onError = (err: unknown): void => {
    if (!health?.explains(err)) logger.warn({ err }, 'metrics: fleet status unavailable');
  };
  const handler: Pick<MetricsHandler, 'contentType' | 'body' | 'close'> =
    leading === undefined
      ? { contentType: registry.contentType, body: () => registry.metrics(), close: async () => {} }
      : createMetricsHandler({ registry, config, onError, health, leading });
  try {
    const server = await serveMetrics({ host: config.metrics.host, port, handler, onError });
    logger.info({ url: `${server.url}/metrics` }, 'metrics served');
    return {
      async close() {
        await server.close();
        await handler.close();
      },
    };
  } catch (err) {
    await handler.close();
    throw err;
  }
}
