import { startFleet, waitFor } from '../support/fleet.js';
import { bulk, percentile, sleep, warmUp } from './support.js';

/** Figures of the priority scenario. */
export interface PriorityFigures {
  criticalP50Ms: number;
  criticalP99Ms: number;
  floodMessages: number;
  bulkPerSecMeanwhile: number;
}

/** Critical mail from `send()` to accepted while a newsletter saturates the provider. */
export async function benchPriority(redisUrl: string, floodMessages: number, otps: number): Promise<PriorityFigures> {
  const fleet = await startFleet({
    redisUrl,
    schedulers: 1,
    workers: 2,
    scenario: { default: { latencyMs: 10 } },
    config: { providers: { ses: { kind: 'ses', rate: 100, burst: 10, concurrency: 32 } } },
  });
  try {
    await warmUp(fleet);
    await fleet.client.campaigns.create({ id: 'flood', priority: 'low' });
    for (let i = 0; i < floodMessages; i += 1000) {
      await fleet.client.sendBulk(bulk(Math.min(1000, floodMessages - i), () => 'bulk.test', { campaignId: 'flood' }));
    }
    await sleep(2000); // the newsletter fills the provider's shared slice
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
      await sleep(200);
    }
    const otpArrivals = () => fleet.sandbox.accepted().filter((a) => a.domain === 'users.test');
    await waitFor(() => otpArrivals().length >= otps, 60_000, `${otps} OTPs accepted`);
    const latencies = otpArrivals()
      .map((a) => a.arrivedAt - sentAt.get(a.sluiceId!)!)
      .sort((a, b) => a - b);
    const first = Math.min(...sentAt.values());
    const last = Math.max(...sentAt.values());
    const bulkDuring = fleet.sandbox
      .accepted()
      .filter((a) => a.domain === 'bulk.test' && a.arrivedAt >= first && a.arrivedAt <= last).length;
    return {
      criticalP50Ms: percentile(latencies, 0.5),
      criticalP99Ms: percentile(latencies, 0.99),
      floodMessages,
      bulkPerSecMeanwhile: bulkDuring / ((last - first) / 1000),
    };
  } finally {
    await fleet.stop();
  }
}
