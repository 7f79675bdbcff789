import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { createSandbox } from '@sluice/sandbox';
import { createCampaign, launchCampaign, recipientsFrom, wholeMessage } from '../support/campaign-recipients.js';
import { waitFor } from '../support/fleet.js';
import { startRedisServer } from '../support/redis-server.js';
import { UNLIMITED } from './campaign-run.js';
import { costOf, processTicks, snapshot, withOwnFleet, withTwoHopRun, type Cost } from './cost.js';
import { profileScripts, scriptProfile, startScriptProfile } from './scripts-by-name.js';
import { fmt, type Row, sleep, spawnTs, stopAll } from './support.js';

// The `batch` figure (issue 33): a campaign sent by Sluice with batches, by Sluice without them,
// and by the peer a user would build instead (one BullMQ queue, workers calling the SES SDK once
// per message, no limits), each with three processes on a Redis of its own, to the same sandbox;
// and bare BullMQ's two hops for Redis work. Throughput is measured at the sandbox (recipients
// over the time from the first enqueue to the last arrival), CPU from Redis's `INFO` and the
// processes' /proc counters.

/** One side's figures. */
export interface BatchSide {
  perSec: number;
  cost: Cost;
  /** Recipients per ESP call, at the sandbox. */
  perCall: number;
}

/** Figures of the batch scenario. */
export interface BatchFigures {
  recipients: number;
  batched: BatchSide;
  unbatched: BatchSide;
  peer: BatchSide;
  /** Bare BullMQ, two hops: Redis µs per message. */
  twoHopsRedisMicros: number;
}

const CAMPAIGN = 'bench-batch';

/** Sluice: 1 scheduler and 2 workers, quotas far above the load, the campaign injected from here. */
function sluiceSide(recipients: number, batches: boolean): Promise<BatchSide> {
  const config = { ...UNLIMITED, batches: { enabled: batches } };
  return withOwnFleet({ config, keep: 'messages' }, async ({ redis, fleet, pids }) => {
    const list = { mix: 'even' as const, recipientCount: recipients };
    await createCampaign(fleet.client, CAMPAIGN);
    await launchCampaign(fleet.client, CAMPAIGN, list);
    const arrived = fleet.sandbox.accepted().length;
    const before = await snapshot(redis, pids);
    const ticks = pids.map(processTicks);
    if (profileScripts) await startScriptProfile(redis);
    const start = Date.now();
    const own = process.cpuUsage();
    await fleet.client.campaigns.inject(CAMPAIGN, recipientsFrom('even', 0, recipients));
    const injectedMs = Date.now() - start;
    await waitFor(() => fleet.sandbox.accepted().length >= arrived + recipients, 600_000, 'every arrival');
    const seconds = (Date.now() - start) / 1000;
    // This process: the producer's injection and the sandbox's answers.
    const used = process.cpuUsage(own);
    const sent = async () => (await fleet.client.campaigns.status(CAMPAIGN)).counts.sent;
    await waitFor(async () => ((await sent()) >= recipients ? true : null), 30_000, 'every record final');
    const after = await snapshot(redis, pids);
    // Where the fleet's CPU went: µs per recipient of the scheduler and of each worker.
    const byProcess = pids.map((pid, i) => ((processTicks(pid) - ticks[i]!) * 1e4) / recipients);
    process.stderr.write(
      `bench: batch (${batches ? 'with' : 'without'} batches): injected in ${injectedMs} ms of ${Math.round(seconds * 1000)}; CPU per recipient by process ${fleet.processes
        .map((p, i) => `${p.name} ${byProcess[i]!.toFixed(0)} µs`)
        .join(
          ', ',
        )}, producer and sandbox ${((used.user + used.system) / recipients).toFixed(0)} µs; Redis by command ${costOf(
        before,
        after,
        recipients,
      )
        .top.slice(0, 8)
        .map((t) => `${t.command} ${t.calls.toFixed(2)}× ${t.micros.toFixed(0)} µs`)
        .join(', ')}\n`,
    );
    if (profileScripts)
      process.stderr.write(
        `bench: batch (${batches ? 'with' : 'without'} batches): Redis by script ${await scriptProfile(redis, recipients)}\n`,
      );
    const arrivals = fleet.sandbox.accepted().slice(arrived);
    const calls = new Set(arrivals.map((a) => a.tags.sluice_batch ?? a.providerMessageId)).size;
    return { perSec: recipients / seconds, cost: costOf(before, after, recipients), perCall: arrivals.length / calls };
  });
}

/** The peer: one queue, three processes calling SendEmail once a job, the same messages whole. */
async function peerSide(recipients: number): Promise<BatchSide> {
  const server = await startRedisServer();
  const redis = new Redis(server.url);
  const sandbox = await createSandbox({ keep: 'counts' });
  const prefix = 'bench-peer';
  const queue = new Queue('peer', { connection: redis, prefix });
  const children = await Promise.all(
    Array.from({ length: 3 }, () => spawnTs('peer-worker.ts', [server.url, prefix, sandbox.url, '32'])),
  );
  try {
    const pids = children.map((c) => c.pid!);
    const before = await snapshot(redis, pids);
    const start = Date.now();
    for (let from = 0; from < recipients; from += 1000) {
      const n = Math.min(1000, recipients - from);
      await queue.addBulk(
        Array.from({ length: n }, (_, k) => ({ name: 'send', data: wholeMessage(CAMPAIGN, 'even', from + k) })),
      );
    }
    while (sandbox.stats().accepted < recipients) await sleep(10);
    const seconds = (Date.now() - start) / 1000;
    const after = await snapshot(redis, pids);
    return { perSec: recipients / seconds, cost: costOf(before, after, recipients), perCall: 1 };
  } finally {
    await stopAll(children);
    await queue.close();
    await sandbox.close();
    await redis.quit();
    await server.stop();
  }
}

/** The scenario: the four runs one after the other on this machine. */
export async function benchBatch(recipients: number, step: (name: string) => void): Promise<BatchFigures> {
  step('batch: Sluice with batches');
  const batched = await sluiceSide(recipients, true);
  step('batch: Sluice without batches');
  const unbatched = await sluiceSide(recipients, false);
  step('batch: the peer (BullMQ + the SES SDK once a message)');
  const peer = await peerSide(recipients);
  step('batch: BullMQ two hops');
  const twoHops = await withTwoHopRun(recipients, async ({ redis, pids, go }) => {
    const before = await snapshot(redis, pids);
    await go();
    return costOf(before, await snapshot(redis, pids), recipients);
  });
  return { recipients, batched, unbatched, peer, twoHopsRedisMicros: twoHops.redisMicros };
}

const us = (n: number): string => `${n.toFixed(0)} µs`;
const ratio = (x: number, y: number): string => `${(x / y).toFixed(2)}×`;

/** The batch scenario's rows of the bench table. */
export function batchRows(b: BatchFigures): Row[] {
  const { batched: s, unbatched: u, peer: p } = b;
  return [
    [
      'batch: campaign recipients/s',
      `${fmt(s.perSec)}/s`,
      `${fmt(p.perSec)}/s (peer)`,
      ratio(s.perSec, p.perSec),
      '≥ 1.5×',
    ],
    ['batch: against Sluice unbatched', `${fmt(s.perSec)}/s`, `${fmt(u.perSec)}/s`, ratio(s.perSec, u.perSec), '≥ 3×'],
    [
      'batch: Redis CPU per recipient',
      us(s.cost.redisMicros),
      `${us(b.twoHopsRedisMicros)} (BullMQ two hops); unbatched ${us(u.cost.redisMicros)}, peer ${us(p.cost.redisMicros)}`,
      ratio(s.cost.redisMicros, b.twoHopsRedisMicros),
      '≤ 1×',
    ],
    [
      'batch: fleet CPU per recipient, ESP call in',
      us(s.cost.processMicros),
      `${us(p.cost.processMicros)} (peer); unbatched ${us(u.cost.processMicros)}`,
      ratio(s.cost.processMicros, p.cost.processMicros),
      '< 1×',
    ],
    ['batch: recipients per ESP call', s.perCall.toFixed(1), `${u.perCall.toFixed(1)} unbatched`, 'context', 'context'],
  ];
}

/** The batch scenario in bench-results.json. */
export function batchResults(b: BatchFigures): Record<string, unknown> {
  const side = (x: BatchSide) => ({
    perSec: Math.round(x.perSec),
    perCall: Math.round(x.perCall * 10) / 10,
    redisMicros: Math.round(x.cost.redisMicros),
    processMicros: Math.round(x.cost.processMicros),
    commands: Math.round(x.cost.commands * 10) / 10,
  });
  return {
    recipients: b.recipients,
    batched: side(b.batched),
    unbatched: side(b.unbatched),
    peer: side(b.peer),
    twoHopsRedisMicros: Math.round(b.twoHopsRedisMicros),
  };
}
