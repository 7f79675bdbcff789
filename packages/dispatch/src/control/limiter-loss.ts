import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { Keys, SluiceConfig } from '@sluice/core';
import type { Adjustments } from '@sluice/throttle';

/** What {@link createLimiterLossChore} needs. */
export interface LimiterLossDeps {
  config: SluiceConfig;
  /** The queues' Redis: where the epoch last seen is kept (it outlives the limiter's data). */
  redis: Redis;
  /** The limiter's Redis. */
  control: Redis;
  keys: Keys;
  adjustments: Adjustments;
  logger: Pick<Logger, 'warn'>;
}

/**
 * The leader's chore that notices the limiter's Redis lost its data. The limiter's epoch is a
 * key under its hash tag, set once; the queues' Redis keeps the epoch the fleet last saw. An
 * epoch gone while one was seen means the buckets went with it (a failover to a replica that
 * had not caught up, a restart without persistence): full again, they would let every provider
 * and receiver send a whole burst at once. So each one's rate is set to
 * `governor.limiterLossFactor` (the governor's factor, rule `limiter-loss`) and climbs back by
 * the governor's recovery. No epoch and none seen is a first start: nothing is lowered. A
 * limiter on the queues' Redis loses both together and is seen as a first start.
 */
export function createLimiterLossChore(deps: LimiterLossDeps): { name: string; run(now: number): Promise<number> } {
  const { config, redis, control, keys, adjustments, logger } = deps;
  const factor = config.governor.limiterLossFactor;
  return {
    name: 'limiter loss',
    async run(now) {
      const [seen, current] = await Promise.all([redis.get(keys.limiterEpochSeen()), control.get(keys.limiterEpoch())]);
      if (current !== null) {
        if (seen !== current) await redis.set(keys.limiterEpochSeen(), current);
        return 0;
      }
      const epoch = `${now}-${randomBytes(4).toString('hex')}`;
      // Another leader of a moment ago may have set it: its epoch stands.
      await control.set(keys.limiterEpoch(), epoch, 'NX');
      await redis.set(keys.limiterEpochSeen(), (await control.get(keys.limiterEpoch())) ?? epoch);
      if (seen === null || factor >= 1) return 0;
      const lowered = [
        ...Object.keys(config.providers).map((p) => keys.bucket('provider', p)),
        ...config.receivers.map((r) => keys.bucket('receiver', r.name)),
      ];
      for (const layerKey of lowered) await adjustments.setGoverned(layerKey, factor, 'limiter-loss');
      logger.warn(
        { event: 'limiter_data_lost', lowered: lowered.length, factor },
        `the limiter's Redis lost its data: ${lowered.length} provider and receiver rates start again at ${factor} and climb back`,
      );
      return lowered.length;
    },
  };
}
