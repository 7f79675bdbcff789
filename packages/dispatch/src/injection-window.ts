import type { Redis } from 'ioredis';
import { FINAL_STATES, type Keys, type SluiceConfig } from '@sluice/core';

/** How fast a campaign's measured rate follows a change: the weight of the newest second. */
const RATE_WEIGHT = 0.3;

/**
 * Each campaign's injection window (DESIGN.md, Campaigns at scale), written by the
 * schedulers to the campaign hash every campaign poll: `win:rate`, the rate its messages
 * reach a final state (what admission let through, smoothed), and `win:ready`, the
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
        rate = last.rate === 0 ? measured : last.rate + RATE_WEIGHT * (measured - last.rate);
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
