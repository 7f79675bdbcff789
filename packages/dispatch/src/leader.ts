import type { Logger } from 'pino';
import type { Redis } from 'ioredis';
import type { Keys, SluiceConfig } from '@sluice/core';
import { createOutcomes, type Campaigns } from '@sluice/store';
import { foldTotals, sweepOverrides, type Adjustments, type Signals } from '@sluice/throttle';
import { createGovernor, type Governor, type GovernorOptions } from './control/governor.js';
import { createLimiterLossChore } from './control/limiter-loss.js';
import type { Warmup } from './control/warmup.js';
import type { LaunchChore } from './launch/chore.js';

// The governor every scheduler runs (one leader acts) and the leader's chores: the scheduler's
// control side, apart from its BullMQ wiring (scheduler.ts).

/** What the governor leader does every tick besides its rules (they run even with the rules off). */
function leaderChores(
  redis: Redis,
  keys: Keys,
  signals: Signals,
  launch: LaunchChore,
): NonNullable<GovernorOptions['chores']> {
  return [
    // Overrides end by themselves for every reader; the leader tidies them, once.
    { name: 'override sweep', run: (now) => sweepOverrides(redis, keys, now) },
    {
      name: 'outcome totals',
      run: async (now) => foldTotals({ redis, keys, signals }, await signals.active('provider'), now),
    },
    // Launch requests decided, and launches in effect re-checked at the rates in force.
    launch,
  ];
}

/**
 * The outcome stream's one owner, a chore of the governor leader: trims what every consumer
 * group acknowledged and shrinks those messages' records as `delivery.retention` says
 * (docs/design/outcomes.md).
 */
function outcomeRetention(config: SluiceConfig, redis: Redis, keys: Keys): { name: string; run(): Promise<unknown> } {
  const outcomes = createOutcomes({
    redis,
    keys,
    recordTtlSeconds: config.delivery.recordTtlSeconds,
    tenantHold: config.outcomes.tenantHold,
  });
  return { name: 'outcome retention', run: () => outcomes.settle(config.delivery.retention) };
}

/** The governor every scheduler runs (one leader acts), with the campaign lifecycle's pause and the leader's chores. */
export function schedulerGovernor(deps: {
  config: SluiceConfig;
  /** The queues' Redis (the outcome stream's retention). */
  redis: Redis;
  /** The limiter's Redis (the lease, the log, overrides, the outcome totals). */
  control: Redis;
  keys: Keys;
  adjustments: Adjustments;
  signals: Signals;
  logger: Logger;
  campaigns: Campaigns;
  warmup: Warmup;
  holder: string;
  launch: LaunchChore;
  archiver: { name: string; run(now: number): Promise<unknown> };
}): Governor {
  const { config, redis, control, keys, adjustments, signals, logger, campaigns, warmup, holder, launch } = deps;
  return createGovernor({
    config,
    redis: control,
    keys,
    adjustments,
    signals,
    logger,
    holder,
    // The campaign lifecycle's own pause and resume, as an admin's: the flag stops admitted
    // mail at the workers, the queue pause stops admission. A campaign cancelled meanwhile
    // stays as it is (cancelling cannot be undone), and one gone since is nothing to do.
    // An archived one is over too: nothing to pause or resume.
    async pauseCampaign(id) {
      const c = await campaigns.get(id);
      if (c && c.archivedAt === undefined) await campaigns.pause(id, { actor: 'governor' });
    },
    async resumeCampaign(id) {
      const c = await campaigns.get(id);
      if (c && c.archivedAt === undefined) await campaigns.resume(id, { actor: 'governor', ifCancelled: 'skip' });
    },
    async campaignClass(id) {
      return (await campaigns.get(id))?.priority;
    },
    warmup,
    // Finished campaigns archived, once a `campaigns.archiveCheckMs`.
    chores: [
      // First: a limiter that lost its data is lowered before the other chores of the tick.
      createLimiterLossChore({ config, redis, control, keys, adjustments, logger }),
      ...leaderChores(control, keys, signals, launch),
      outcomeRetention(config, redis, keys),
      deps.archiver,
    ],
  });
}
