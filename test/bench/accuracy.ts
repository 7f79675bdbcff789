import { maxInWindow, startFleet, waitFor, type Fleet } from '../support/fleet.js';
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
 * limit used while backlog exists (after the first second, which holds the burst). With
 * more than one worker, one is stopped for half a second and another killed mid-run
 * ({@link stall}): the late messages and the on-time ones after them must still fit.
 */
export async function benchAccuracy(
  redisUrl: string,
  seconds: number,
  workerCounts = [1, 4, 8],
): Promise<AccuracyFigures> {
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
      runs.push({ workers, ...(await measure(fleet, limit, burst, limit * seconds)) });
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

/**
 * What real hosts do now and then, to a running fleet: a third of the way through, one
 * worker stops for 0.5 s (SIGSTOP, SIGCONT: a long GC pause, a stalled VM) and comes back
 * with its messages late; two thirds of the way, another is killed (SIGKILL) and its
 * messages come back once their hold runs out.
 */
async function stall(fleet: Fleet, before: number, n: number): Promise<void> {
  const workers = fleet.processes.filter((p) => p.name.startsWith('worker'));
  const [stopped, killed] = workers;
  if (!stopped || !killed) return;
  const reached = (share: number) => () => fleet.sandbox.stats().accepted >= before + n * share;
  await waitFor(reached(1 / 3), 120_000, 'a third sent');
  stopped.child.kill('SIGSTOP');
  await sleep(500);
  stopped.child.kill('SIGCONT');
  await waitFor(reached(2 / 3), 120_000, 'two thirds sent');
  killed.child.kill('SIGKILL');
}

/** Peak and use of one limit (`limit` + `burst`) by a campaign of `n` sent while backlog exists. */
async function measure(fleet: Fleet, limit: number, burst: number, n: number): Promise<Omit<AccuracyRun, 'workers'>> {
  const before = fleet.sandbox.stats().accepted;
  // Enqueue while paused, so this process (which also stamps the sandbox's arrivals)
  // is idle when sending starts.
  await fleet.client.campaigns.create({ id: 'accuracy', priority: 'low' });
  await fleet.client.campaigns.pause('accuracy');
  await fleet.client.sendBulk(bulk(n, (i) => `d${i % 20}.test`, { campaignId: 'accuracy' }));
  await fleet.client.campaigns.resume('accuracy');
  const stalled = stall(fleet, before, n);
  await waitFor(() => fleet.sandbox.stats().accepted >= before + n, 60_000 + (n / limit) * 2_000, `${n} accepted`);
  await stalled;
  const times = fleet.sandbox
    .accepted()
    .slice(before)
    .map((a) => a.arrivedAt);
  const peak = maxInWindow(times);
  const first = Math.min(...times);
  const last = Math.max(...times);
  const steady = times.filter((t) => t >= first + 1000).length;
  return {
    peak,
    overshootPct: (Math.max(0, peak - (limit + burst)) / (limit + burst)) * 100,
    utilizationPct: (steady / ((last - first - 1000) / 1000) / limit) * 100,
  };
}

/** A receiver's limit (its 20 domains, 50/s, burst 5) under a provider with room to spare, shared by `workers` processes. */
export async function benchReceiverAccuracy(
  redisUrl: string,
  seconds: number,
  workers = 4,
): Promise<AccuracyRun & { limitPerSec: number; burst: number }> {
  const limit = 50;
  const burst = 5;
  const fleet = await startFleet({
    redisUrl,
    schedulers: 1,
    workers,
    config: {
      providers: { ses: { kind: 'ses', rate: 400, burst: 40, concurrency: 64 } },
      receivers: [{ name: 'capped', domains: Array.from({ length: 20 }, (_, i) => `d${i}.test`), rate: limit, burst }],
      reserves: { critical: 0 },
    },
  });
  try {
    await warmUp(fleet);
    return { workers, limitPerSec: limit, burst, ...(await measure(fleet, limit, burst, limit * seconds)) };
  } finally {
    await fleet.stop();
  }
}
