import type { Logger } from 'pino';
import { configAndLogger, runService, type SluiceConfig } from '@sluice/core';
import { createScheduler } from '@sluice/dispatch';

// The config first (it says how addresses are logged); a bad one fails the start below.
const { config, logger } = configAndLogger('sluice-scheduler');

/** `/metrics` on `metrics.host:port`; loaded only when a port is set. */
async function startMetrics(config: SluiceConfig, port: number, logger: Logger): Promise<{ close(): Promise<void> }> {
  const [{ Registry, collectDefaultMetrics }, { createMetricsHandler, serveMetrics }] = await Promise.all([
    import('prom-client'),
    import('@sluice/ops'),
  ]);
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const onError = (err: unknown): void => logger.warn({ err }, 'metrics: fleet status unavailable');
  const handler = createMetricsHandler({ registry, config, onError });
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

runService({
  name: 'scheduler',
  logger,
  async start() {
    if (config instanceof Error) throw config;
    const metrics =
      config.metrics.port === undefined ? undefined : await startMetrics(config, config.metrics.port, logger);
    const scheduler = createScheduler({ config, logger });
    await scheduler.start();
    // Its jobs are short; the deadline only guards against a hang (say Redis is gone).
    return {
      async close() {
        await scheduler.close();
        await metrics?.close();
      },
      shutdownDeadlineMs: config.worker.lockDurationMs + 5_000,
    };
  },
});
