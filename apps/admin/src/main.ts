import { configAndLogger, runService } from '@sluice/core';
import { createRedisHealth } from '@sluice/store';
import { createAdmin } from './admin.js';

// The config first (it says how addresses are logged); a bad one fails the start below.
const { config, logger } = configAndLogger('sluice-admin');

runService({
  name: 'admin',
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
    const admin = createAdmin({ config, logger, health, requestLogger: logger });
    // Not listening until Redis answers: the board's first read needs it.
    await health.ready();
    const address = await admin.listen();
    logger.info(
      { address, auth: config.admin.tokens.length > 0 ? 'tokens' : 'none (devNoAuth, loopback)' },
      'admin listening',
    );
    probe?.started();
    return {
      async close() {
        probe?.drain();
        health.close();
        await admin.close();
        await probe?.close();
      },
      shutdownDeadlineMs: 10_000,
    };
  },
});
