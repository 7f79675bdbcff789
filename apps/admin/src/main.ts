import { pino } from 'pino';
import { loadConfig, runService } from '@sluice/core';
import { createAdmin } from './admin.js';

const logger = pino({ name: 'sluice-admin' });

runService({
  name: 'admin',
  logger,
  async start() {
    const config = loadConfig();
    const admin = createAdmin({ config, logger });
    const address = await admin.listen();
    logger.info({ address, auth: config.admin.tokens.length > 0 ? 'tokens' : 'none (devNoAuth, loopback)' }, 'admin listening');
    return { close: () => admin.close(), shutdownDeadlineMs: 10_000 };
  },
});
