import { pino } from 'pino';
import { loadConfig } from '@sluice/core';
import { createWorker } from './worker.js';

const logger = pino({ name: 'sluice-worker' });

async function main(): Promise<void> {
  const config = loadConfig();
  const worker = createWorker({ config, logger });
  await worker.start();
  logger.info({ event: 'ready', pid: process.pid }, 'worker ready');
  let stopping = false;
  const stop = (signal: string): void => {
    if (stopping) return;
    stopping = true;
    // Never hang on the way out (say Redis is gone): give up after the drain time.
    setTimeout(() => {
      logger.error('shutdown did not finish in time; exiting');
      process.exit(1);
    }, config.worker.drainTimeoutMs + 5_000).unref();
    logger.info({ signal }, 'worker draining');
    worker
      .close()
      .then(() => process.exit(0))
      .catch((err: unknown) => {
        logger.error({ err }, 'worker close failed');
        process.exit(1);
      });
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

main().catch((err: unknown) => {
  logger.fatal({ err }, err instanceof Error ? err.message : 'worker failed to start');
  process.exit(1);
});
