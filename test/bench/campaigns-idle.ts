// `pnpm bench --only campaigns-idle` (issue 29): what idle and archived campaigns cost the
// scheduler's poll and /metrics. The baseline, in the same run and on the same Redis, is the
// poll as it was: every campaign of the active set read one after another (its queue's job
// counts and its window fields), what `pollCampaigns` sent before the campaigns-with-work set.
import { performance } from 'node:perf_hooks';
import { Redis } from 'ioredis';
import pino from 'pino';
import { FINAL_STATES, createKeys, parseConfig, type Keys, type SluiceConfig } from '@sluice/core';
import { createScheduler } from '@sluice/dispatch';
import { createStatus, fleetMetrics } from '@sluice/ops';
import { createCampaigns, createQueues, createStore, type Campaigns, type Queues } from '@sluice/store';
import { startRedisServer } from '../support/redis-server.js';
import { fmt, round, type Row } from './support.js';

/** The figures of {@link benchCampaignsIdle}. */
export interface CampaignsIdleFigures {
  campaigns: number;
  /** One poll with no campaign: the new poll, commands and ms. */
  none: PollCost;
  /** One poll with `campaigns` idle (created, nothing sent): the new poll, and the old one. */
  idle: PollCost;
  idleBefore: PollCost;
  /** One poll with `campaigns` archived: the new poll, and the old one before they were archived (finished). */
  archived: PollCost;
  finishedBefore: PollCost;
  /** /metrics with none and with `campaigns` archived: series and bytes of Prometheus text. */
  metricsNone: { series: number; bytes: number };
  metricsArchived: { series: number; bytes: number };
  /** /metrics with `campaigns` finished and not archived, as before archiving existed. */
  metricsFinished: { series: number; bytes: number };
}

/** What one poll cost, the median of `POLLS`. */
export interface PollCost {
  commands: number;
  ms: number;
}

const POLLS = 21;

async function commands(redis: Redis): Promise<number> {
  const info = await redis.info('commandstats');
  let calls = 0;
  for (const m of info.matchAll(/calls=(\d+)/g)) calls += Number(m[1]);
  return calls;
}

/** The median poll of `POLLS`: commands (INFO commandstats delta, less the INFO itself) and ms. */
async function measure(redis: Redis, poll: () => Promise<void>): Promise<PollCost> {
  const runs: PollCost[] = [];
  for (let i = 0; i < POLLS; i++) {
    const before = await commands(redis);
    const t = performance.now();
    await poll();
    const ms = performance.now() - t;
    runs.push({ commands: (await commands(redis)) - before - 1, ms });
  }
  const mid = (xs: number[]): number => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  return { commands: mid(runs.map((r) => r.commands)), ms: round(mid(runs.map((r) => r.ms)), 2) };
}

/** The poll as it was before issue 29 (scheduler.ts `pollCampaigns`), minus starting workers: none had work. */
function legacyPoll(redis: Redis, keys: Keys, queues: Queues): () => Promise<void> {
  const fields = FINAL_STATES.map((s) => `n:${s}`);
  return async () => {
    for (const id of await redis.smembers(keys.campaigns())) {
      await queues.campaign(id).getJobCounts('waiting', 'delayed', 'active', 'prioritized');
      await redis.hmget(keys.campaign(id), ...fields);
    }
  };
}

async function metricsSize(config: SluiceConfig, redis: Redis, keys: Keys): Promise<{ series: number; bytes: number }> {
  const families = fleetMetrics(await createStatus({ config, redis, keys }).snapshot());
  let series = 0;
  let bytes = 0;
  for (const f of families)
    for (const v of f.values) {
      series++;
      const labels = Object.entries(v.labels).map(([k, l]) => `${k}="${l}"`);
      bytes += Buffer.byteLength(`${f.name}{${labels.join(',')}} ${v.value}\n`);
    }
  return { series, bytes };
}

async function finishedCampaigns(campaigns: Campaigns, redis: Redis, keys: Keys, n: number): Promise<void> {
  const store = createStore({ redis, keys });
  for (let i = 0; i < n; i++) {
    const id = `done-${i}`;
    await campaigns.create({ id });
    const m = { id: `${id}-m`, tenantId: 'default', campaignId: id, priority: 'low', acceptedAt: Date.now() };
    await store.accept({ ...m, from: { address: 'a@acme.test' }, to: [{ address: 'b@example.com' }] } as never);
    await store.finalize(m.id, 'sent', { campaignId: id, provider: 'ses' });
  }
}

/** 1,000 idle campaigns, then 1,000 finished and archived: one scheduler's poll and /metrics, before and after. */
export async function benchCampaignsIdle(n = 1_000): Promise<CampaignsIdleFigures> {
  const server = await startRedisServer();
  const redis = new Redis(server.url);
  const prefix = 'bench-idle';
  const keys = createKeys(prefix);
  const config = parseConfig({
    redis: { url: server.url, prefix },
    providers: { ses: { kind: 'ses', sandbox: true, rate: 100, pool: 'default' } },
    defaultProvider: 'ses',
    organisations: { builtIn: false },
    // The timer's polls and the leader's ticks out of the way: the bench polls by hand.
    governor: { intervalMs: 600_000 },
  });
  const scheduler = createScheduler({
    config,
    logger: pino({ level: 'silent' }),
    providers: new Map(),
    campaignPollMs: 600_000,
  });
  const queues = createQueues({ redis, keys });
  const campaigns = createCampaigns({ redis, keys, queues });
  try {
    await scheduler.start();
    const legacy = legacyPoll(redis, keys, queues);
    const poll = () => scheduler.poll();
    const none = await measure(redis, poll);
    const metricsNone = await metricsSize(config, redis, keys);
    for (let i = 0; i < n; i++) await campaigns.create({ id: `idle-${i}` });
    const idle = await measure(redis, poll);
    const idleBefore = await measure(redis, legacy);
    for (let i = 0; i < n; i++) await campaigns.delete(`idle-${i}`, { actor: 'bench' });
    await finishedCampaigns(campaigns, redis, keys, n);
    const finishedBefore = await measure(redis, legacy);
    const metricsFinished = await metricsSize(config, redis, keys);
    for (let i = 0; i < n; i++) await campaigns.archive(`done-${i}`, { actor: 'bench' });
    const archived = await measure(redis, poll);
    const metricsArchived = await metricsSize(config, redis, keys);
    return {
      campaigns: n,
      none,
      idle,
      idleBefore,
      archived,
      finishedBefore,
      metricsNone,
      metricsArchived,
      metricsFinished,
    };
  } finally {
    await scheduler.close();
    await queues.close();
    await redis.quit();
    await server.stop();
  }
}

const ratio = (a: number, b: number): string => (b === 0 ? (a === 0 ? '1.00×' : '∞') : `${(a / b).toFixed(2)}×`);

/** The table's rows: each figure against its baseline from the same run. */
export function campaignsIdleRows(f: CampaignsIdleFigures): Row[] {
  const n = fmt(f.campaigns);
  return [
    [
      `poll commands, ${n} idle`,
      fmt(f.idle.commands),
      `${fmt(f.idleBefore.commands)} (poll before)`,
      ratio(f.idle.commands, f.idleBefore.commands),
      `= none (${fmt(f.none.commands)})`,
    ],
    [
      `poll ms, ${n} idle`,
      String(f.idle.ms),
      `${f.idleBefore.ms} (poll before)`,
      ratio(f.idle.ms, f.idleBefore.ms),
      `≈ none (${f.none.ms})`,
    ],
    [
      `poll commands, ${n} archived`,
      fmt(f.archived.commands),
      `${fmt(f.finishedBefore.commands)} (before, finished)`,
      ratio(f.archived.commands, f.finishedBefore.commands),
      `= none (${fmt(f.none.commands)})`,
    ],
    [
      `poll ms, ${n} archived`,
      String(f.archived.ms),
      `${f.finishedBefore.ms} (before, finished)`,
      ratio(f.archived.ms, f.finishedBefore.ms),
      `≈ none (${f.none.ms})`,
    ],
    [
      `/metrics series, ${n} archived`,
      fmt(f.metricsArchived.series),
      `${fmt(f.metricsNone.series)} (none)`,
      ratio(f.metricsArchived.series, f.metricsNone.series),
      '1.00×',
    ],
    [
      `/metrics bytes, ${n} archived`,
      fmt(f.metricsArchived.bytes),
      `${fmt(f.metricsNone.bytes)} (none)`,
      ratio(f.metricsArchived.bytes, f.metricsNone.bytes),
      '1.00×',
    ],
    [
      `/metrics series, ${n} finished (before)`,
      fmt(f.metricsFinished.series),
      `${fmt(f.metricsNone.series)} (none)`,
      ratio(f.metricsFinished.series, f.metricsNone.series),
      '-',
    ],
  ];
}
