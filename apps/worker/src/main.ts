import type { Logger } from 'pino';
import { configAndLogger, runService, type SluiceConfig } from '@sluice/core';
import { createWorker } from '@sluice/dispatch';

// The config first (it says how addresses are logged); a bad one fails the start below.
const { config, logger } = configAndLogger('sluice-worker');

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
  name: 'worker',
  logger,
  async start() {
    if (config instanceof Error) throw config;
    // First, so a taken port fails the start before any job is fetched.
    const metrics =
      config.metrics.port === undefined ? undefined : await startMetrics(config, config.metrics.port, logger);
    const worker = createWorker({ config, logger });
    await worker.start();
    // Draining may take the drain time; then give up rather than hang.
    return {
      async close() {
        await worker.close();
        await metrics?.close();
      },
      shutdownDeadlineMs: config.worker.drainTimeoutMs + 5_000,
    };
  },
});
