import { pino } from 'pino';
import { loadConfig, runService } from '@sluice/core';
import { createScheduler } from '@sluice/dispatch';

const logger = pino({ name: 'sluice-scheduler' });

runService({
  name: 'scheduler',
  logger,
  async start() {
    const config = loadConfig();
    const scheduler = createScheduler({ config, logger });
    await scheduler.start();
    // Its jobs are short; the deadline only guards against a hang (say Redis is gone).
    return { close: () => scheduler.close(), shutdownDeadlineMs: config.worker.lockDurationMs + 5_000 };
  },
});
