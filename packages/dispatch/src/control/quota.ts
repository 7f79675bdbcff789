import type { Logger } from 'pino';
import { systemClock, type Clock, type SluiceConfig } from '@sluice/core';
import type { Provider } from '@sluice/providers';
import type { Adjustments } from '@sluice/throttle';

/** Options of {@link watchQuotas}. */
export interface QuotaWatchOptions {
  config: SluiceConfig;
  /** Adapters whose `check()` reports account limits (SES `GetAccount`); others are skipped. */
  providers: Map<string, Provider>;
  adjustments: Pick<Adjustments, 'setCap' | 'pause' | 'standing'>;
  logger: Logger;
  /** Where "now" comes from for a pause's end. @defaultValue `systemClock` */
  clock?: Clock;
  /** Told each account reading (the launch projection keeps the last: the daily quota left). @defaultValue none */
  onReading?: (provider: string, quota: { max24HourSend: number; sentLast24Hours: number }) => void;
}

const QUOTA_REASON = 'daily quota';

/**
 * Reads each SES account's limits at start and every `quotaRefreshMs`: the provider layer
 * never runs above `MaxSendRate` (its rate is capped for every process), and an account
 * that has sent its `Max24HourSend` is paused until a later reading shows room again
 * (the 24-hour window rolls, so only SES knows when). Returns a stop function.
 */
export function watchQuotas(options: QuotaWatchOptions): () => Promise<void> {
  const { config, adjustments, logger } = options;
  const clock = options.clock ?? systemClock;
  const timers = new Map<string, NodeJS.Timeout>();
  const running = new Set<Promise<void>>();
  let stopped = false;

  async function read(provider: Provider): Promise<void> {
    const configured = config.providers[provider.id];
    if (configured === undefined) return;
    const result = await provider.check();
    if (!result.ok || result.quota === undefined) {
      if (!result.ok) logger.warn({ provider: provider.id }, `quota check failed: ${result.error}`);
      return;
    }
    const q = result.quota;
    options.onReading?.(provider.id, q);
    if (q.maxSendRate > 0 && q.maxSendRate < configured.rate) {
      await adjustments.setCap(provider.id, q.maxSendRate);
      logger.warn(
        { provider: provider.id, configured: configured.rate, maxSendRate: q.maxSendRate },
        'configured rate is above the account MaxSendRate: capped',
      );
    } else {
      await adjustments.setCap(provider.id, undefined);
    }
    const standing = adjustments.standing(provider.id);
    const spent = q.max24HourSend >= 0 && q.sentLast24Hours >= q.max24HourSend;
    if (spent || !q.sendingEnabled) {
      const reason = spent
        ? `${QUOTA_REASON}: sent ${q.sentLast24Hours} of Max24HourSend ${q.max24HourSend}`
        : 'SES SendingEnabled is false';
      const refresh = 'quotaRefreshMs' in configured ? configured.quotaRefreshMs : 60_000;
      await adjustments.pause(provider.id, clock() + refresh + 1_000, reason);
      logger.warn({ provider: provider.id }, `provider paused: ${reason}`);
    } else if (standing.state === 'paused') {
      await adjustments.pause(provider.id, undefined);
      logger.info(
        { provider: provider.id, sentLast24Hours: q.sentLast24Hours, max24HourSend: q.max24HourSend },
        'provider has quota again: resumed',
      );
    }
  }

  for (const provider of options.providers.values()) {
    const configured = config.providers[provider.id];
    if (configured?.kind !== 'ses') continue;
    const tick = (): void => {
      if (stopped) return;
      const run = read(provider)
        .catch((err: unknown) => logger.error({ err, provider: provider.id }, 'quota check failed'))
        .finally(() => {
          running.delete(run);
          if (!stopped) timers.set(provider.id, setTimeout(tick, configured.quotaRefreshMs));
        });
      running.add(run);
    };
    tick();
  }

  return async () => {
    stopped = true;
    for (const t of timers.values()) clearTimeout(t);
    await Promise.all(running);
  };
}
