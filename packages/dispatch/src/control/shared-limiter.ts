import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { SluiceConfig } from '@sluice/core';
import { createLimiter, withLocalShare, type LocalShareLimiter } from '@sluice/throttle';

/**
 * The limiter a scheduler's admission or a worker's arrival gate asks, with the fleet's
 * reserves, on the limiter Redis (`control`): with `reserves.localShare` set, critical mail
 * goes on at that share while the limiter Redis does not answer, and the process says so
 * once when it starts and once when the limiter answers again.
 */
export function fleetLimiter(control: Redis, config: SluiceConfig, logger: Logger): LocalShareLimiter {
  const { reserves } = config;
  const limiter = createLimiter({
    redis: control,
    reserves,
    lendAheadMs: reserves.lendAheadMs,
    jitterSlackMs: config.jitterSlackMs,
  });
  return withLocalShare({
    limiter,
    share: reserves.localShare,
    reserveCritical: reserves.critical,
    afterMs: reserves.localAfterMs,
    probe: () => control.ping(),
    onChange(away, downMs) {
      if (away) {
        logger.warn(
          { event: 'limiter_away', localShare: reserves.localShare },
          `the limiter Redis does not answer: critical mail goes on at ${reserves.localShare} of its reserve, the rest waits`,
        );
      } else logger.info({ event: 'limiter_back', downMs }, `the limiter Redis answers again after ${downMs} ms`);
    },
  });
}
