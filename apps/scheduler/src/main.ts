import { pino } from 'pino';
import { loadConfig } from '@sluice/core';
import { createScheduler } from './scheduler.js';

const logger = pino({ name: 'sluice-scheduler' });

async function main(): Promise<void> {
  const config = loadConfig();
  const scheduler = createScheduler({ config, logger });
  await scheduler.start();
  logger.info({ event: 'ready', pid: process.pid }, 'scheduler ready');
  let stopping = false;
  const stop = (signal: string): void => {
    if (stopping) return;
    stopping = true;
    // Never hang on the way out (say Redis is gone): give up after the drain time.
    setTimeout(() => {
      logger.error('shutdown did not finish in time; exiting');
      process.exit(1);
    }, config.worker.drainTimeoutMs + 5_000).unref();
    logger.info({ signal }, 'scheduler stopping');
    scheduler
      .close()
      .then(() => process.exit(0))
      .catch((err: unknown) => {
        logger.error({ err }, 'scheduler close failed');
        process.exit(1);
      });
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

main().catch((err: unknown) => {
  logger.fatal({ err }, err instanceof Error ? err.message : 'scheduler failed to start');
  process.exit(1);
});
