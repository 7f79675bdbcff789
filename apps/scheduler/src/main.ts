import { configAndLogger, runService } from '@sluice/core';
import { createScheduler } from '@sluice/dispatch';
import { createRedisHealth } from '@sluice/store';

// The config first (it says how addresses are logged); a bad one fails the start below.
const { config, logger } = configAndLogger('sluice-scheduler');

runService({
  name: 'scheduler',
  logger,
  async start() {
    if (config instanceof Error) throw config;
    // One reporter for every connection of the process: one line per outage, not one per retry.
    const health = createRedisHealth({ url: config.redis.url, logger });
    // `/metrics` only when a port is set (its code is loaded only then). The fleet's figures
    // are served by the leading scheduler alone, so a sum over schedulers counts each once.
    // Made first (it takes no job before start()), so the metrics can ask whether it leads.
    const scheduler = createScheduler({ config, logger, health });
    // `/healthz` and `/readyz` first, when a port is set: live while it waits for Redis.
    const probe =
      config.health.port === undefined
        ? undefined
        : await (
            await import('@sluice/ops')
          ).startHealth({ config, port: config.health.port, info: () => ({ leading: scheduler.leading }) });
    const port = config.metrics.port;
    const leading = (): boolean => scheduler.leading;
    const metrics =
      port === undefined
        ? undefined
        : await (await import('@sluice/ops')).startMetrics({ config, port, logger, health, leading });
    // Without Redis the scheduler waits (saying so once), and is ready once it answers.
    await health.ready();
    await scheduler.start();
    probe?.started();
    // Its jobs are short; the deadline only guards against a hang (say Redis is gone).
    return {
      async close() {
        probe?.drain();
        health.close();
        await scheduler.close();
        await metrics?.close();
        await probe?.close();
      },
      shutdownDeadlineMs: config.worker.lockDurationMs + 5_000,
    };
  },
});
