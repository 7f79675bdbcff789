import { pino } from 'pino';
import { loadConfig, runService } from '@sluice/core';
import { createWorker } from '@sluice/dispatch';

const logger = pino({ name: 'sluice-worker' });

runService({
  name: 'worker',
  logger,
  async start() {
    const config = loadConfig();
    const worker = createWorker({ config, logger });
    await worker.start();
    // Draining may take the drain time; then give up rather than hang.
    return { close: () => worker.close(), shutdownDeadlineMs: config.worker.drainTimeoutMs + 5_000 };
  },
});
