import { startFleet, waitFor } from '../support/fleet.js';
import { bulk, percentile, round, sleep, warmUp, type Row } from './support.js';

/** Figures of the priority scenario. */
export interface PriorityFigures {
  criticalP50Ms: number;
  criticalP99Ms: number;
  floodMessages: number;
  /** Bulk arrivals a second with no critical mail: the reserve lent (`reserves.lendAheadMs`). */
  bulkPerSecAlone: number;
  bulkPerSecMeanwhile: number;
  /** The provider's rate, the limit both bulk figures are shares of. */
  providerRate: number;
  /** The gap between OTPs. */
  otpEveryMs: number;
}

const PROVIDER_RATE = 100;
const OTP_EVERY_MS = 250;

/**
 * A newsletter saturating the provider (in batches, unless `batches` is false): first alone (how much of the provider it gets, the
 * critical reserve lent), then with an OTP every 250 ms (their latency from `send()` to
 * accepted, and what bulk keeps meanwhile).
 */
export async function benchPriority(
  redisUrl: string,
  floodMessages: number,
  otps: number,
  batches = true,
): Promise<PriorityFigures> {
  const fleet = await startFleet({
    redisUrl,
    schedulers: 1,
    workers: 2,
    scenario: { default: { latencyMs: 10 } },
    config: {
      providers: { ses: { kind: 'ses', sandbox: true, rate: PROVIDER_RATE, burst: 10, concurrency: 32 } },
      // The newsletter is campaign mail of the low class: batched unless this says not.
      batches: { enabled: batches },
    },
  });
  try {
    await warmUp(fleet);
    await fleet.client.campaigns.create({ id: 'flood', priority: 'low' });
    for (let i = 0; i < floodMessages; i += 1000) {
      await fleet.client.sendBulk(bulk(Math.min(1000, floodMessages - i), () => 'bulk.test', { campaignId: 'flood' }));
    }
    await sleep(2000); // the newsletter fills the provider
    const bulkBetween = (from: number, to: number): number =>
      fleet.sandbox.accepted().filter((a) => a.domain === 'bulk.test' && a.arrivedAt >= from && a.arrivedAt < to)
        .length /
      ((to - from) / 1000);
    const aloneFrom = Date.now();
    await sleep(5000);
    const bulkPerSecAlone = bulkBetween(aloneFrom, Date.now());
    const sentAt = new Map<string, number>();
    for (let i = 0; i < otps; i++) {
      const t = Date.now();
      const { id } = await fleet.client.send({
        from: 'auth@acme.test',
        to: `otp${i}@users.test`,
        subject: 'code',
        text: String(i),
        priority: 'critical',
      });
      sentAt.set(id, t);
      await sleep(OTP_EVERY_MS);
    }
    const otpArrivals = () => fleet.sandbox.accepted().filter((a) => a.domain === 'users.test');
    await waitFor(() => otpArrivals().length >= otps, 60_000, `${otps} OTPs accepted`);
    const latencies = otpArrivals()
      .map((a) => a.arrivedAt - sentAt.get(a.sluiceId!)!)
      .sort((a, b) => a - b);
    const first = Math.min(...sentAt.values());
    const last = Math.max(...sentAt.values());
    return {
      criticalP50Ms: percentile(latencies, 0.5),
      criticalP99Ms: percentile(latencies, 0.99),
      floodMessages,
      bulkPerSecAlone,
      bulkPerSecMeanwhile: bulkBetween(first, last),
      providerRate: PROVIDER_RATE,
      otpEveryMs: OTP_EVERY_MS,
    };
  } finally {
    await fleet.stop();
  }
}

/** The priority scenario's rows: the batched newsletter's run, and the OTPs' p99 beside one sent alone. */
export function priorityRows(p: PriorityFigures, unbatched: PriorityFigures): Row[] {
  return [
    [
      'priority: bulk alone (critical reserve lent)',
      `${p.bulkPerSecAlone.toFixed(1)}/s`,
      `${p.providerRate}/s provider`,
      `${((100 * p.bulkPerSecAlone) / p.providerRate).toFixed(1)}% used`,
      '≥ 97%',
    ],
    [
      `priority: critical p50 / p99 (an OTP every ${p.otpEveryMs} ms)`,
      `${p.criticalP50Ms} / ${p.criticalP99Ms} ms`,
      `${p.bulkPerSecMeanwhile.toFixed(1)}/s bulk meanwhile`,
      `of ${p.providerRate - 1000 / p.otpEveryMs}/s the OTPs leave`,
      'p99 ≤ 1,000 ms',
    ],
    [
      'priority: critical p99, newsletter batched',
      `${p.criticalP99Ms} ms`,
      `${unbatched.criticalP99Ms} ms (newsletter one by one)`,
      `${(p.criticalP99Ms / unbatched.criticalP99Ms).toFixed(2)}×`,
      'no worse',
    ],
  ];
}

/** The priority scenario in bench-results.json. */
export function priorityResults(p: PriorityFigures, unbatched: PriorityFigures): Record<string, unknown> {
  return {
    criticalP50Ms: p.criticalP50Ms,
    criticalP99Ms: p.criticalP99Ms,
    floodMessages: p.floodMessages,
    bulkPerSecAlone: round(p.bulkPerSecAlone, 1),
    bulkPerSecMeanwhile: round(p.bulkPerSecMeanwhile, 1),
    unbatchedCriticalP50Ms: unbatched.criticalP50Ms,
    unbatchedCriticalP99Ms: unbatched.criticalP99Ms,
  };
}
