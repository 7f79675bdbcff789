import { Queue } from 'bullmq';
import { createSandbox } from '@sluice/sandbox';
import { Redis } from 'ioredis';
import { startFleet } from '../support/fleet.js';
import { benchEmail, benchSesClient } from './ses-client.js';
import { bulk, sleep, spawnTs, stopAll, warmUp } from './support.js';

/** Figures of the pipeline scenario. */
export interface PipelineFigures {
  messagesPerSec: number;
  bullmqOneHopPerSec: number;
  ratio: number;
  processes: number;
  /** The SES SDK alone sending to the sandbox from one process: the ESP call's own ceiling here. */
  sdkAlonePerSec: number;
}

/**
 * End to end (client → scheduler → dispatch → worker → sandbox accepted) with quotas far
 * above the load, against bare BullMQ one hop (`addBulk` → `Worker` with a no-op
 * processor) with the same number of processes.
 */
export async function benchPipeline(redisUrl: string, messages: number): Promise<PipelineFigures> {
  const schedulers = 1;
  const workers = 2;
  const fleet = await startFleet({
    redisUrl,
    schedulers,
    workers,
    config: {
      providers: { ses: { kind: 'ses', sandbox: true, rate: 1_000_000, burst: 100_000, concurrency: 64 } },
      scheduler: { concurrency: 64 },
      worker: { concurrency: { critical: 4, high: 4, normal: 32, low: 32 } },
    },
  });
  let messagesPerSec: number;
  try {
    await warmUp(fleet);
    const before = fleet.sandbox.stats().accepted;
    const start = Date.now();
    for (let i = 0; i < messages; i += 1000) {
      await fleet.client.sendBulk(bulk(Math.min(1000, messages - i), (k) => `d${(i + k) % 50}.test`));
    }
    while (fleet.sandbox.stats().accepted < before + messages) await sleep(20);
    messagesPerSec = messages / ((Date.now() - start) / 1000);
  } finally {
    await fleet.stop();
  }

  const prefix = `bench-hop${Date.now()}`;
  const redis = new Redis(redisUrl);
  const queue = new Queue('onehop', { connection: redis, prefix });
  const children = await Promise.all(
    Array.from({ length: schedulers + workers }, () => spawnTs('noop-worker.ts', [redisUrl, prefix, 'onehop', '32'])),
  );
  let bullmqOneHopPerSec: number;
  try {
    const start = Date.now();
    for (let i = 0; i < messages; i += 1000) {
      await queue.addBulk(
        bulk(Math.min(1000, messages - i), (k) => `d${(i + k) % 50}.test`).map((data) => ({ name: 'send', data })),
      );
    }
    while ((await queue.getCompletedCount()) < messages) await sleep(20);
    bullmqOneHopPerSec = messages / ((Date.now() - start) / 1000);
  } finally {
    await stopAll(children);
    await queue.obliterate({ force: true });
    await queue.close();
    await redis.quit();
  }
  return {
    messagesPerSec,
    bullmqOneHopPerSec,
    ratio: messagesPerSec / bullmqOneHopPerSec,
    processes: schedulers + workers,
    sdkAlonePerSec: await sdkAlone(messages),
  };
}

/** The real SES client sending to an in-process sandbox, 64 at a time, nothing else. */
async function sdkAlone(messages: number): Promise<number> {
  const sandbox = await createSandbox({});
  const client = benchSesClient(sandbox.url, 64);
  try {
    await client.send(benchEmail(0));
    let next = 0;
    const start = Date.now();
    await Promise.all(
      Array.from({ length: 64 }, async () => {
        while (next < messages) await client.send(benchEmail(next++));
      }),
    );
    return messages / ((Date.now() - start) / 1000);
  } finally {
    client.destroy();
    await sandbox.close();
  }
}
