import { configAndLogger, runService } from '@sluice/core';
import { createAdmin } from './admin.js';

// The config first (it says how addresses are logged); a bad one fails the start below.
const { config, logger } = configAndLogger('sluice-admin');

runService({
  name: 'admin',
  logger,
  async start() {
    if (config instanceof Error) throw config;
    const admin = createAdmin({ config, logger });
    const address = await admin.listen();
    logger.info(
      { address, auth: config.admin.tokens.length > 0 ? 'tokens' : 'none (devNoAuth, loopback)' },
      'admin listening',
    );
    return { close: () => admin.close(), shutdownDeadlineMs: 10_000 };
  },
});
