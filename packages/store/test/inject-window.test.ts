import { describe, expect, it } from 'vitest';
import { parseConfig } from '@sluice/core';
import { createInjectionWindows } from '@sluice/store';
import { useRedisPrefix } from '../../../test/support/redis-prefix.js';

// The window is what a campaign keeps in Redis: `aheadMs` of its admitted rate. A run at a
// steady rate must hold about the same at its fifth minute as at its first, whatever a single
// second's count does, and still follow a real change of rate.
describe("a campaign's injection window", () => {
  const r = useRedisPrefix();

  /** Polls once a second for `seconds`, `perSecond(t)` messages turning final each second. */
  async function run(seconds: number, perSecond: (t: number) => number): Promise<number[]> {
    const config = parseConfig({ redis: { prefix: r.prefix } });
    const windows = createInjectionWindows({ redis: r.redis, keys: r.keys, config });
    const key = r.keys.campaign('spring');
    const ready: number[] = [];
    let sent = 0;
    for (let t = 0; t < seconds; t++) {
      sent += perSecond(t);
      // Its messages' counters live in its parts in the homes: one home holds them all here.
      await r.redis.hset(r.keys.campaignHome('spring', 0), 'n:sent', sent);
      await windows.update('spring', t * 1000);
      ready.push(Number(await r.redis.hget(key, 'win:ready')));
    }
    return ready;
  }

  it('holds aheadMs of the steady rate, not of its fastest seconds', async () => {
    // 600/s on average, each second's count swinging ±30% (a fixed pattern, so the test is the same every run).
    const swing = [1.3, 0.7, 1.1, 0.8, 1.25, 0.75, 1.0, 1.2, 0.9, 0.7, 1.3, 1.0];
    const ready = await run(300, (t) => Math.round(600 * swing[t % swing.length]!));
    const settled = ready.slice(60);
    // 20 s of 600/s is 12,000; a window following each second would reach 15,600.
    expect(Math.max(...settled)).toBeLessThan(12_000 * 1.05);
    expect(Math.min(...settled)).toBeGreaterThan(12_000 * 0.95);
  });

  it('follows a change of rate within a minute, up and down', async () => {
    const ready = await run(180, (t) => (t < 60 ? 600 : t < 120 ? 1200 : 300));
    expect(ready[59]).toBeGreaterThan(12_000 * 0.95);
    expect(ready[119]).toBeGreaterThan(24_000 * 0.9);
    expect(ready[179]).toBeLessThan(6_000 * 1.2);
    // Never under the floor, never over the bound.
    const { minWindow, maxWindow } = parseConfig({}).injection;
    expect(Math.min(...ready)).toBeGreaterThanOrEqual(minWindow);
    expect(Math.max(...ready)).toBeLessThanOrEqual(maxWindow);
  });
});
