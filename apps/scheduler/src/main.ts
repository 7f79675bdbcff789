import { pino, type Logger } from 'pino';
import { loadConfig, loggerOptions, runService, type SluiceConfig } from '@sluice/core';
import { createScheduler } from '@sluice/dispatch';

// The config says how addresses are logged, so it is read before the logger is made. A bad
// one fails the start below, logged with the defaults (credentials redacted, addresses hashed).
const config = ((): SluiceConfig | Error => {
  try {
    return loadConfig();
  } catch (err) {
    return err instanceof Error ? err : new Error(String(err));
  }
})();
const logger = pino(loggerOptions('sluice-scheduler', config instanceof Error ? undefined : config));

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
