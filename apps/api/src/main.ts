import { Registry, collectDefaultMetrics } from 'prom-client';
import { runService, configAndLogger } from '@sluice/core';
import { createMetricsHandler } from '@sluice/ops';
import { createApi } from './api.js';

// The config first (it says how addresses are logged); a bad one fails the start below.
const { config, logger } = configAndLogger('sluice-api');

runService({
  name: 'api',
  logger,
  async start() {
    if (config instanceof Error) throw config;
    const registry = new Registry();
    collectDefaultMetrics({ register: registry });
    const metrics = createMetricsHandler({
      registry,
      config,
      onError: (err) => logger.warn({ err }, 'metrics: fleet status unavailable'),
    });
    const api = createApi({ config, logger, metrics });
    const address = await api.listen();
    logger.info({ address, metrics: `${address}/metrics` }, 'api listening');
    return {
      async close() {
        await api.close();
        await metrics.close();
      },
      shutdownDeadlineMs: 10_000,
    };
  },
});
