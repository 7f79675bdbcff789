import { maxInWindow, startFleet } from '../support/fleet.js';
import { bulk, sleep, warmUp } from './support.js';

/** One run of the accuracy scenario. */
export interface AccuracyRun {
  workers: number;
  peak: number;
  overshootPct: number;
  utilizationPct: number;
}

/** Figures of the accuracy scenario: the worst of the runs. */
export interface AccuracyFigures {
  limitPerSec: number;
  burst: number;
  workers: number;
  maxOvershootPct: number;
  utilizationPct: number;
  runs: AccuracyRun[];
}

/**
 * 1, 4 and 8 worker processes against one provider limit: the largest overshoot above
 * limit + burst in any 1 s window of the sandbox's arrival times, and the share of the
 * limit used while backlog exists (after the first second, which holds the burst).
 */
export async function benchAccuracy(redisUrl: string, seconds: number, workerCounts = [1, 4, 8]): Promise<AccuracyFigures> {
  const limit = 100;
  const burst = 10;
  const runs: AccuracyRun[] = [];
  for (const workers of workerCounts) {
    const fleet = await startFleet({
      redisUrl,
      schedulers: 1,
      workers,
      config: { providers: { ses: { kind: 'ses', rate: limit, burst, concurrency: 64 } }, reserves: { critical: 0 } },
    });
    try {
      await warmUp(fleet);
      const before = fleet.sandbox.stats().accepted;
      const n = limit * seconds;
      // Enqueue while paused, so this process (which also stamps the sandbox's arrivals)
      // is idle when sending starts.
      await fleet.client.campaigns.create({ id: 'accuracy', priority: 'low' });
      await fleet.client.campaigns.pause('accuracy');
      await fleet.client.sendBulk(bulk(n, (i) => `d${i % 20}.test`, { campaignId: 'accuracy' }));
      await fleet.client.campaigns.resume('accuracy');
      while (fleet.sandbox.stats().accepted < before + n) await sleep(50);
      const times = fleet.sandbox.accepted().slice(before).map((a) => a.arrivedAt);
      const peak = maxInWindow(times);
      const first = Math.min(...times);
      const last = Math.max(...times);
      const steady = times.filter((t) => t >= first + 1000).length;
      runs.push({
        workers,
        peak,
        overshootPct: (Math.max(0, peak - (limit + burst)) / (limit + burst)) * 100,
        utilizationPct: (steady / ((last - first - 1000) / 1000) / limit) * 100,
      });
    } finally {
      await fleet.stop();
    }
  }
  return {
    limitPerSec: limit,
    burst,
    workers: Math.max(...workerCounts),
    maxOvershootPct: Math.max(...runs.map((r) => r.overshootPct)),
    utilizationPct: Math.min(...runs.map((r) => r.utilizationPct)),
    runs,
  };
}
