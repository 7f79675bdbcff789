import { collectDefaultMetrics, Registry } from 'prom-client';
import type { SluiceConfig } from '@sluice/core';
import type { RedisHealth } from '@sluice/store';
import { createMetricsHandler, serveMetrics } from './metrics.js';

/**
 * A scheduler's or worker's `/metrics` on `config.metrics.host:port`: the fleet metrics
 * and this process's own, on a registry of its own. Closes what it opened if it cannot
 * listen.
 */
export async function startFleetMetrics(options: {
  config: SluiceConfig;
  port: number;
  logger: { info(obj: object, msg: string): void; warn(obj: object, msg: string): void };
  /** The process's Redis health reporter: a scrape that fails for want of Redis is its outage, not a line. */
  health?: RedisHealth | undefined;
}): Promise<{ close(): Promise<void> }> {
  const { config, port, logger, health } = options;
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const onError = (err: unknown): void => {
    if (!health?.explains(err)) logger.warn({ err }, 'metrics: fleet status unavailable');
  };
  const handler = createMetricsHandler({ registry, config, onError, health });
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
