import { pino } from 'pino';
import { loadConfig, runService } from '@sluice/core';
import { createApi } from './api.js';

const logger = pino({ name: 'sluice-api' });

runService({
  name: 'api',
  logger,
  async start() {
    const config = loadConfig();
    const api = createApi({ config, logger });
    const address = await api.listen();
    logger.info({ address }, 'api listening');
    return { close: () => api.close(), shutdownDeadlineMs: 10_000 };
  },
});
