import { configAndLogger, runService } from '@sluice/core';
import { createWorker } from '@sluice/dispatch';
import { createRedisHealth } from '@sluice/store';

// The config first (it says how addresses are logged); a bad one fails the start below.
const { config, logger } = configAndLogger('sluice-worker');

runService({
  name: 'worker',
  logger,
  async start() {
    if (config instanceof Error) throw config;
    // One reporter for every connection of the process: one line per outage, not one per retry.
    const health = createRedisHealth({ url: config.redis.url, logger });
    // First, so a taken port fails the start before any job is fetched.
    // `/metrics` only when a port is set (its code is loaded only then).
    const port = config.metrics.port;
    const metrics =
      port === undefined
        ? undefined
        : await (await import('@sluice/ops')).startFleetMetrics({ config, port, logger, health });
    const worker = createWorker({ config, logger, health });
    // Without Redis the worker waits (saying so once), and is ready once it answers.
    await health.ready();
    await worker.start();
    // Draining may take the drain time; then give up rather than hang.
    return {
      async close() {
        health.close();
        await worker.close();
        await metrics?.close();
      },
      shutdownDeadlineMs: config.worker.drainTimeoutMs + 5_000,
    };
  },
});
