import { configAndLogger, runService } from '@sluice/core';
import { createWorker, type DeliveryMetrics } from '@sluice/dispatch';
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
    // `/healthz` and `/readyz` first, when a port is set: live while it waits for Redis.
    const probe =
      config.health.port === undefined
        ? undefined
        : await (await import('@sluice/ops')).startHealth({ config, port: config.health.port });
    // First, so a taken port fails the start before any job is fetched.
    // `/metrics` only when a port is set (its code is loaded only then): this worker's own
    // counters, counted in memory as it sends, so a sum over workers is the fleet's.
    const port = config.metrics.port;
    let counted: { metrics: DeliveryMetrics; server: { close(): Promise<void> } } | undefined;
    if (port !== undefined) {
      const ops = await import('@sluice/ops');
      const registry = ops.createProcessRegistry();
      const deliveryMetrics = ops.createDeliveryMetrics(registry);
      counted = {
        metrics: deliveryMetrics,
        server: await ops.startMetrics({ config, port, logger, health, registry }),
      };
    }
    const worker = createWorker({ config, logger, health, metrics: counted?.metrics });
    // Without Redis the worker waits (saying so once), and is ready once it answers.
    await health.ready();
    await worker.start();
    probe?.started();
    // Draining may take the drain time; then give up rather than hang.
    return {
      async close() {
        // Not ready from the signal on: no new traffic is meant for a stopping worker.
        probe?.drain();
        health.close();
        await worker.close();
        await counted?.server.close();
        await probe?.close();
      },
      shutdownDeadlineMs: config.worker.drainTimeoutMs + 5_000,
    };
  },
});
