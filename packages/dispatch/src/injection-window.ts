import type { Redis } from 'ioredis';
import { FINAL_STATES, type Keys, type SluiceConfig } from '@sluice/core';

/**
 * The time constant of a campaign's measured rate: it follows a change by 63% in this long.
 * One second's count swings ±20% at a steady rate (a chunk, a collection, a busy core); a
 * window that followed it held the fastest few seconds of a run, so a longer run peaked higher
 * than a short one at the same rate. Averaged over about 20 s the swing is a few percent.
 */
export const RATE_TAU_MS = 20_000;

/**
 * Each campaign's injection window (DESIGN.md, Campaigns at scale), written by the
 * schedulers to the campaign hash every campaign poll: `win:rate`, the rate its messages
 * reach a final state (what admission let through, averaged over about {@link RATE_TAU_MS}), and `win:ready`, the
 * recipients admission may find waiting (`injection.aheadMs` of that rate, within
 * `minWindow`…`maxWindow`), and `win:max` (`maxWindow`). The producer reads them.
 */
export interface InjectionWindows {
  /** Measures one campaign and writes its window. */
  update(campaignId: string, now: number): Promise<void>;
}

/** Creates the window keeper of one scheduler. */
export function createInjectionWindows(deps: { redis: Redis; keys: Keys; config: SluiceConfig }): InjectionWindows {
  const { redis, keys } = deps;
  const { aheadMs, minWindow, maxWindow } = deps.config.injection;
  const seen = new Map<string, { final: number; at: number; rate: number; written: string }>();
  const fields = FINAL_STATES.map((s) => `n:${s}`);

  return {
    async update(campaignId, now) {
      const row = await redis.hmget(keys.campaign(campaignId), ...fields);
      const final = row.reduce((sum, v) => sum + Number(v ?? 0), 0);
      const last = seen.get(campaignId);
      let rate = 0;
      if (last && now > last.at) {
        const measured = ((final - last.final) * 1000) / (now - last.at);
        // Weighted by the time since the last poll, so a late poll counts for what it covers.
        const weight = 1 - Math.exp(-(now - last.at) / RATE_TAU_MS);
        rate = last.rate === 0 ? measured : last.rate + weight * (measured - last.rate);
      }
      const ready = Math.min(maxWindow, Math.max(minWindow, Math.ceil((rate * aheadMs) / 1000)));
      const written = `${ready}|${rate.toFixed(1)}`;
      seen.set(campaignId, { final, at: now, rate, written });
      // An idle campaign's window is written once, a busy one's as it changes.
      if (written === last?.written) return;
      await redis.hset(
        keys.campaign(campaignId),
        'win:ready',
        ready,
        'win:max',
        maxWindow,
        'win:rate',
        rate.toFixed(1),
      );
    },
  };
}
