import { configAndLogger, runService } from '@sluice/core';
import { createScheduler } from '@sluice/dispatch';

// The config first (it says how addresses are logged); a bad one fails the start below.
const { config, logger } = configAndLogger('sluice-scheduler');

runService({
  name: 'scheduler',
  logger,
  async start() {
    if (config instanceof Error) throw config;
    // `/metrics` only when a port is set (its code is loaded only then).
    const port = config.metrics.port;
    const metrics =
      port === undefined ? undefined : await (await import('@sluice/ops')).startFleetMetrics({ config, port, logger });
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
