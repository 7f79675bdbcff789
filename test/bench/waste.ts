import { Redis } from 'ioredis';
import { pino } from 'pino';
import { createKeys, defineScripts, parseConfig } from '@sluice/core';
import { createScheduler } from '@sluice/dispatch';
import { startFleet, waitFor } from '../support/fleet.js';
import { bulk, round, sleep, warmUp, type Row } from './support.js';

/** Figures of the waste scenario. */
export interface WasteFigures {
  oversubscription: 10;
  limiterCallsPerSend: number;
  pollingCallsPerSend: number;
}

/**
 * Limiter calls per sent message when one key (a campaign's own limit) is oversubscribed
 * 10×, with the scheduler in this process so its calls can be counted. Baseline, on the same
 * Redis: the same backlog of waiters polling the textbook token bucket every 10 ms.
 */
export async function benchWaste(redisUrl: string, rate: number): Promise<WasteFigures> {
  const n = rate * 10;
  const providers = { ses: { kind: 'ses', sandbox: true, rate: 100_000, burst: 1000, concurrency: 32 } };
  const fleet = await startFleet({ redisUrl, schedulers: 0, workers: 1, config: { providers } });
  const config = parseConfig({
    redis: { url: redisUrl, prefix: fleet.prefix },
    sandbox: { url: fleet.sandbox.url },
    providers,
  });
  const scheduler = createScheduler({ config, logger: pino({ level: 'silent' }) });
  let limiterCallsPerSend: number;
  try {
    await scheduler.start();
    await warmUp(fleet);
    await fleet.client.campaigns.create({
      id: 'hot',
      priority: 'low',
      rate,
      burst: Math.max(1, Math.round(rate / 10)),
    });
    const callsBefore = scheduler.limiterCalls;
    const before = fleet.sandbox.stats().accepted;
    await fleet.client.sendBulk(bulk(n, (i) => `d${i % 20}.test`, { campaignId: 'hot' }));
    await waitFor(() => fleet.sandbox.stats().accepted >= before + n, 120_000, `${n} accepted`);
    limiterCallsPerSend = (scheduler.limiterCalls - callsBefore) / n;
  } finally {
    await scheduler.close();
    await fleet.stop();
  }

  // Baseline: waiters poll the textbook bucket every 10 ms until each is granted.
  const redis = defineScripts(new Redis(redisUrl), new URL('./', import.meta.url), {
    benchTokenBucket: { file: 'token-bucket-1.lua', keys: 1 },
  });
  const key = `${createKeys(`bench-w${Date.now()}`).bucket('campaign', 'hot')}:tb`;
  const waiters = rate * 4;
  let calls = 0;
  await Promise.all(
    Array.from({ length: waiters }, async () => {
      for (;;) {
        calls++;
        const [allowed] = (await redis.benchTokenBucket(key, rate, Math.max(1, Math.round(rate / 10)), 1)) as [number];
        if (allowed === 1) return;
        await sleep(10);
      }
    }),
  );
  await redis.quit();
  return { oversubscription: 10, limiterCallsPerSend, pollingCallsPerSend: calls / waiters };
}

/** The waste scenario's row: limiter calls per send against polling. */
export function wasteRow(waste: WasteFigures): Row {
  return [
    'waste: limiter calls per send (10×)',
    waste.limiterCallsPerSend.toFixed(3),
    `${waste.pollingCallsPerSend.toFixed(1)} (polling every 10 ms)`,
    `${(waste.pollingCallsPerSend / waste.limiterCallsPerSend).toFixed(0)}× fewer`,
    '≤ 1.1',
  ];
}

/** The waste scenario in bench-results.json. */
export function wasteResults(waste: WasteFigures): Record<string, unknown> {
  return { oversubscription: waste.oversubscription, limiterCallsPerSend: round(waste.limiterCallsPerSend, 3) };
}
