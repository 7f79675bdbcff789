import { pino } from 'pino';
import { Registry, collectDefaultMetrics } from 'prom-client';
import { loadConfig, loggerOptions, runService, type SluiceConfig } from '@sluice/core';
import { createMetricsHandler } from '@sluice/ops';
import { createApi } from './api.js';

// The config says how addresses are logged, so it is read before the logger is made. A bad
// one fails the start below, logged with the defaults (credentials redacted, addresses hashed).
const config = ((): SluiceConfig | Error => {
  try {
    return loadConfig();
  } catch (err) {
    return err instanceof Error ? err : new Error(String(err));
  }
})();
const logger = pino(loggerOptions('sluice-api', config instanceof Error ? undefined : config));

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
