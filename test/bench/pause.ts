import { startFleet, waitFor } from '../support/fleet.js';
import { bulk, sleep, warmUp } from './support.js';

/** Figures of the pause scenario. */
export interface PauseFigures {
  /** From `pause()` to the campaign's last send the sandbox took (in flight at the pause included). */
  lastSendAfterPauseMs: number;
  sentBeforeHold: number;
  campaignMessages: number;
}

/** A campaign sending at its provider's 50/s is paused: how long until its sends stop. */
export async function benchPause(redisUrl: string, campaignMessages: number): Promise<PauseFigures> {
  const fleet = await startFleet({
    redisUrl,
    schedulers: 1,
    workers: 2,
    scenario: { default: { latencyMs: 5 } },
    config: { providers: { ses: { kind: 'ses', sandbox: true, rate: 50, burst: 10, concurrency: 16 } } },
  });
  try {
    await warmUp(fleet);
    await fleet.client.campaigns.create({ id: 'weekly', priority: 'low' });
    await fleet.client.sendBulk(bulk(campaignMessages, () => 'weekly.test', { campaignId: 'weekly' }));
    const weekly = () => fleet.sandbox.accepted().filter((a) => a.domain === 'weekly.test');
    await waitFor(() => weekly().length >= 60, 20_000, 'the campaign sending');
    const pausedAt = Date.now();
    await fleet.client.campaigns.pause('weekly');
    await sleep(3000); // what still arrives after the pause, for 3 s
    const times = weekly().map((a) => a.arrivedAt);
    return {
      lastSendAfterPauseMs: Math.max(0, Math.max(...times) - pausedAt),
      sentBeforeHold: times.length,
      campaignMessages,
    };
  } finally {
    await fleet.stop();
  }
}
