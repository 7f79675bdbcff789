import { runService, configAndLogger } from '@sluice/core';
import { createRedisHealth } from '@sluice/store';
import { createApi } from './api.js';

// The config first (it says how addresses are logged); a bad one fails the start below.
const { config, logger } = configAndLogger('sluice-api');

runService({
  name: 'api',
  logger,
  async start() {
    if (config instanceof Error) throw config;
    // One reporter for every connection of the process: one line per outage, not one per retry.
    const health = createRedisHealth({ url: config.redis.url, logger });
    // The api faces the ESPs' webhooks: its `/metrics` (its own process's figures) is not on
    // that port but, as every fleet process's, on `metrics.host:metrics.port` when a port is set.
    // `/healthz` and `/readyz` first, when a port is set: live while it waits for Redis.
    const probe =
      config.health.port === undefined
        ? undefined
        : await (await import('@sluice/ops')).startHealth({ config, port: config.health.port });
    const port = config.metrics.port;
    const metrics =
      port === undefined
        ? undefined
        : await (await import('@sluice/ops')).startMetrics({ config, port, logger, health });
    const api = createApi({ config, logger, health, requestLogger: logger });
    // Not listening until Redis answers: a webhook taken now could not be applied.
    await health.ready();
    const address = await api.listen();
    logger.info({ address }, 'api listening');
    probe?.started();
    return {
      async close() {
        probe?.drain();
        health.close();
        await api.close();
        await metrics?.close();
        await probe?.close();
      },
      shutdownDeadlineMs: 10_000,
    };
  },
});
