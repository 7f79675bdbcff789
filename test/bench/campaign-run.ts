// The pieces of the bench's `campaign` figure (campaign.ts): a fleet on a Redis of its own,
// Redis memory sampled through the whole run, and the producer as a process of its own.
import { Redis } from 'ioredis';
import {
  createCampaign,
  startOutcomeConsumer,
  type OutcomeConsumer,
  type RecipientMix,
} from '../support/campaign-recipients.js';
import { startFleet, waitFor, type Fleet, type FleetOptions } from '../support/fleet.js';
import { producerResult, startProducer, type Producer } from '../support/producer-process.js';
import { startRedisServer } from '../support/redis-server.js';
import { sleep, warmUp } from './support.js';

/** Figures of one injected campaign sent through a fleet. */
export interface InjectedRun {
  recipients: number;
  /** Recipients accepted per second, from the producer's `inject` call to its end. */
  injectPerSec: number;
  /** Arrivals per second at the sandbox, first to last. */
  sendPerSec: number;
  producerRssPeak: number;
  /** The peak of Redis `used_memory` above the idle fleet, sampled every 150 ms. */
  redisPeakAboveIdle: number;
  bytesPerRecipientAfterSend: number;
  /** After every outcome is acknowledged and the records shrunk as `retention` says. */
  bytesPerRecipientAfterAck: number;
  /**
   * What the campaign's own keys hold per recipient then (`MEMORY USAGE` of its records, compact
   * blocks and gone bitmap): `used_memory`'s delta also counts the fleet's time-bucketed keys
   * (signals, stats, TTL 5 minutes), which a short run spreads over few recipients.
   */
  keptBytesPerRecipient: number;
  /** What sent records keep once acknowledged (`delivery.retention` of the campaign's class). */
  retention: CampaignRetention;
  /** From the launch (today: the producer's `inject` call) to the first arrival at the sandbox. */
  firstSendMs: number;
  /** Recipients that arrived twice at the sandbox (must be 0). */
  duplicates: number;
  seconds: number;
  /** Bytes by key pattern near the peak, when asked for. */
  peakBreakdown?: Record<string, number>;
}

/** What a campaign's sent records keep once acknowledged (`delivery.retention`). */
export type CampaignRetention = 'compact' | 'until-acknowledged';

/** A fleet whose CPU is the limit: every quota far above what two cores can send. */
export const UNLIMITED = {
  providers: { ses: { kind: 'ses', sandbox: true, rate: 1_000_000, burst: 100_000, concurrency: 64 } },
  scheduler: { concurrency: 64 },
  worker: { concurrency: { critical: 4, high: 4, normal: 32, low: 32 } },
  defaults: { campaign: { rate: 1_000_000 } },
  organisations: { builtIn: false },
};

/** The bytes of a campaign's records, compact blocks, gone bitmaps and counters in every home (`MEMORY USAGE` of each). */
async function campaignBytes(redis: Redis, prefix: string, campaignId: string): Promise<number> {
  let total = 0;
  for (const pattern of [
    `${prefix}:*:msg:${campaignId}_*`,
    `${prefix}:*:mc:${campaignId}:*`,
    `${prefix}:*:mgone:${campaignId}`,
    `${prefix}:*:cn:${campaignId}`,
  ]) {
    let cursor = '0';
    do {
      const [next, found] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 5_000);
      cursor = next;
      for (const key of found) total += Number((await redis.memory('USAGE', key)) ?? 0);
    } while (cursor !== '0');
  }
  return total;
}

/** Redis `used_memory`. */
export async function usedMemory(redis: Redis): Promise<number> {
  return Number(/used_memory:(\d+)/.exec(await redis.info('memory'))![1]);
}

/** Bytes by key pattern (`MEMORY USAGE` of every key, digits folded to `#`). */
export async function memoryByPattern(redis: Redis): Promise<Record<string, number>> {
  const byPattern: Record<string, number> = {};
  let cursor = '0';
  do {
    const [next, found] = await redis.scan(cursor, 'COUNT', 2_000);
    cursor = next;
    const pipeline = redis.pipeline();
    for (const key of found) pipeline.memory('USAGE', key, 'SAMPLES', '0');
    const sizes = (await pipeline.exec()) ?? [];
    found.forEach((key, i) => {
      const pattern = key.replace(/\d+/g, '#');
      byPattern[pattern] = (byPattern[pattern] ?? 0) + Number(sizes[i]?.[1] ?? 0);
    });
  } while (cursor !== '0');
  return byPattern;
}

/** What {@link sampleMemory} resolves. */
export interface MemorySamples {
  peak: number;
  /** At the sample nearest the peak (taken at most every 10 s), when asked for. */
  breakdown?: Record<string, number>;
}

/**
 * Samples `used_memory` every `everyMs` until stopped; `stop` resolves the peak and, with
 * `breakdown`, {@link memoryByPattern} at a new peak (at most every 10 s).
 */
export function sampleMemory(redis: Redis, everyMs = 150, breakdown = false): { stop(): Promise<MemorySamples> } {
  const samples: MemorySamples = { peak: 0 };
  let brokenDownAt = 0;
  let running = true;
  const loop = (async () => {
    while (running) {
      const used = await usedMemory(redis);
      if (used > samples.peak && breakdown && Date.now() - brokenDownAt > 10_000) {
        brokenDownAt = Date.now();
        samples.breakdown = await memoryByPattern(redis);
      }
      samples.peak = Math.max(samples.peak, used);
      await sleep(everyMs);
    }
  })();
  return {
    async stop() {
      const first = running;
      running = false;
      await loop;
      if (first) samples.peak = Math.max(samples.peak, await usedMemory(redis));
      return samples;
    },
  };
}

/** Runs `body` with a fleet of one scheduler and `workers` workers on a Redis of its own. */
export async function withFleet<T>(
  options: Pick<FleetOptions, 'scenario' | 'keep' | 'fleetCheck'> & {
    workers: number;
    schedulers?: number;
    config: Record<string, unknown>;
  },
  body: (fleet: Fleet, redis: Redis, url: string) => Promise<T>,
): Promise<T> {
  const server = await startRedisServer();
  const redis = new Redis(server.url);
  try {
    const fleet = await startFleet({
      redisUrl: server.url,
      schedulers: options.schedulers ?? 1,
      workers: options.workers,
      config: options.config,
      scenario: options.scenario,
      keep: options.keep,
      fleetCheck: options.fleetCheck,
    });
    try {
      return await body(fleet, redis, server.url);
    } finally {
      await fleet.stop();
    }
  } finally {
    await redis.quit();
    await server.stop();
  }
}

/**
 * A campaign of `recipients` (the `even` mix: 20 domains) injected by a producer process
 * while a fleet with no quota in the way sends it; Redis sampled from before the campaign
 * exists until after it is sent (and its outcomes acknowledged, once there is a stream).
 */
export async function runInjected(
  recipients: number,
  retention: CampaignRetention = 'compact',
  workers = 2,
  breakdown = false,
): Promise<InjectedRun> {
  const config = {
    ...UNLIMITED,
    delivery: { retention: { critical: 'full', high: 'full', normal: retention, low: retention } },
  };
  // The sandbox keeps counts, not a million messages, and has no daily quota in the way.
  const scenario = { account: { max24HourSend: -1 } };
  return withFleet({ workers, config, scenario, keep: 'counts' }, async (fleet, redis, url) => {
    const id = 'big';
    const mix: RecipientMix = 'even';
    await warmUp(fleet);
    // From here the sandbox counts only the campaign's arrivals.
    fleet.sandbox.reset();
    const base = await usedMemory(redis);
    const memory = sampleMemory(redis, 150, breakdown);
    let producer: Producer | undefined;
    let consumer: OutcomeConsumer | undefined;
    try {
      const began = Date.now();
      await createCampaign(fleet.client, id);
      consumer = startOutcomeConsumer(fleet.client, id);
      // The producer launches the campaign once it is up, as a backend does: the first send
      // is timed from the launch, not from the start of a Node process.
      producer = await startProducer(fleet, { redisUrl: url, campaignId: id, mix, count: recipients, launch: true });
      const firstAt = await waitFor(() => fleet.sandbox.stats().firstArrivedAt, 60_000, 'the first arrival');
      const done = await producerResult(producer);
      await waitFor(
        () => fleet.sandbox.stats().accepted >= recipients,
        30 * 60_000,
        `${recipients} recipients at the sandbox`,
      );
      await waitFor(async () => (await fleet.client.campaigns.status(id)).pending === 0, 60_000, 'every record final');
      const lastAt = fleet.sandbox.stats().lastArrivedAt ?? firstAt;
      await sleep(1000);
      const after = (await usedMemory(redis)) - base;
      await consumer.stop();
      // The leader's retention chore shrinks what every group acknowledged, a tick later.
      await waitFor(async () => (await fleet.client.outcomes.backlog()) === 0, 30_000, 'outcomes settled');
      await sleep(1000);
      const afterAck = (await usedMemory(redis)) - base;
      const kept = await campaignBytes(redis, fleet.prefix, id);
      const samples = await memory.stop();
      const peak = samples.peak - base;
      return {
        recipients,
        injectPerSec: (done.accepted * 1000) / Math.max(1, done.endedAt - done.startedAt),
        sendPerSec: (recipients * 1000) / Math.max(1, lastAt - firstAt),
        producerRssPeak: done.rssPeak,
        redisPeakAboveIdle: peak,
        bytesPerRecipientAfterSend: after / recipients,
        bytesPerRecipientAfterAck: afterAck / recipients,
        keptBytesPerRecipient: kept / recipients,
        retention,
        firstSendMs: firstAt - producer.launchedAt!,
        duplicates: fleet.sandbox.stats().duplicates,
        seconds: (Date.now() - began) / 1000,
        ...(samples.breakdown ? { peakBreakdown: samples.breakdown } : {}),
      };
    } finally {
      await memory.stop();
      await producer?.process.stop({ signal: 'SIGKILL' });
      await consumer?.stop();
    }
  });
}

/** Figures of the baseline: the same campaign as whole messages, one `sendBulk`. */
export interface BulkRun {
  recipients: number;
  /** Redis bytes per recipient with every message queued (the fleet stopped, as in the issue). */
  redisBytesPerRecipient: number;
  producerRssPeak: number;
  /** The producer's RSS before it built the list. */
  producerRssIdle: number;
  perSec: number;
}

/** `sendBulk` of `recipients` whole messages (1 KB of html each) with no fleet running. */
export async function runBulk(recipients: number): Promise<BulkRun> {
  // No fleet on purpose: the baseline measures what queueing alone costs.
  return withFleet({ workers: 0, schedulers: 0, config: UNLIMITED, fleetCheck: 'off' }, async (fleet, redis, url) => {
    const id = 'bulk';
    await fleet.client.campaigns.create({ id, priority: 'low' });
    const base = await usedMemory(redis);
    const producer = await startProducer(fleet, {
      redisUrl: url,
      campaignId: id,
      mix: 'even',
      count: recipients,
      mode: 'sendBulk',
      fleetCheck: 'off',
    });
    const done = await producerResult(producer);
    const held = (await usedMemory(redis)) - base;
    const idle = producer.process.tail().find((l) => l.startsWith('{"event":"ready"'));
    return {
      recipients,
      redisBytesPerRecipient: held / recipients,
      producerRssPeak: done.rssPeak,
      producerRssIdle: idle ? (JSON.parse(idle) as { rss: number }).rss : 0,
      perSec: (done.accepted * 1000) / Math.max(1, done.endedAt - done.startedAt),
    };
  });
}
