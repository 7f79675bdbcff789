import { Redis } from 'ioredis';
import { startFleet, waitFor } from '../support/fleet.js';
import { startRedisServer } from '../support/redis-server.js';
import { bulk, sleep } from './support.js';

/** Figures of the memory scenario. */
export interface MemoryFigures {
  campaignRecipients: number;
  redisPeakBytes: number;
  redisBytesPerRecipient: number;
  bytesPerRecipientAfterSend: number;
}

/**
 * Redis memory while a campaign of `recipients` is queued and sent, on a Redis of its own:
 * the peak of `used_memory` above what the idle fleet uses, sampled every 100 ms.
 */
export async function benchMemory(recipients: number): Promise<MemoryFigures> {
  const server = await startRedisServer();
  const redis = new Redis(server.url);
  const used = async (): Promise<number> => Number(/used_memory:(\d+)/.exec(await redis.info('memory'))![1]);
  const fleet = await startFleet({
    redisUrl: server.url,
    schedulers: 1,
    workers: 2,
    config: {
      providers: { ses: { kind: 'ses', sandbox: true, rate: 1_000_000, burst: 100_000, concurrency: 64 } },
      scheduler: { concurrency: 64 },
      worker: { concurrency: { critical: 4, high: 4, normal: 32, low: 32 } },
    },
  });
  try {
    await fleet.client.campaigns.create({ id: 'big', priority: 'low' });
    const base = await used();
    let peak = base;
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        peak = Math.max(peak, await used());
        await sleep(100);
      }
    })();
    for (let i = 0; i < recipients; i += 1000) {
      await fleet.client.sendBulk(
        bulk(Math.min(1000, recipients - i), (k) => `d${(i + k) % 100}.test`, { campaignId: 'big' }),
      );
    }
    await waitFor(() => fleet.sandbox.stats().accepted >= recipients, 600_000, `${recipients} accepted`);
    await sleep(1000);
    sampling = false;
    await sampler;
    const after = (await used()) - base;
    return {
      campaignRecipients: recipients,
      redisPeakBytes: peak - base,
      redisBytesPerRecipient: (peak - base) / recipients,
      bytesPerRecipientAfterSend: after / recipients,
    };
  } finally {
    await fleet.stop();
    await redis.quit();
    await server.stop();
  }
}
