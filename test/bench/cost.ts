import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { createKeys } from '@sluice/core';
import { createSandbox } from '@sluice/sandbox';
import { startFleet, waitFor, type Fleet } from '../support/fleet.js';
import { startRedisServer } from '../support/redis-server.js';
import { UNLIMITED } from './campaign-run.js';
import { bulk, fmt, type Row, sleep, spawnTs, stopAll, warmUp } from './support.js';

/** What Redis and the processes spent moving a batch of messages, per message. */
export interface Cost {
  /** Redis CPU (`INFO cpu`, user + system) per message, µs. */
  redisMicros: number;
  /** Commands Redis ran per message (`INFO commandstats`; those scripts run included). */
  commands: number;
  /** Script calls (`EVALSHA`, `EVAL`, `FCALL`) per message. */
  scripts: number;
  /** Bytes into / out of Redis per message (`total_net_input_bytes`, `…_output_bytes`). */
  bytesIn: number;
  bytesOut: number;
  /** CPU of the consuming processes per message, µs. */
  processMicros: number;
  /** The costliest commands per message, by Redis CPU: name, calls, µs. */
  top: { command: string; calls: number; micros: number }[];
}

/** Figures of the cost scenario. */
export interface CostFigures {
  messages: number;
  sluice: Cost;
  /** Bare BullMQ moving the same jobs through two queues, with as many processes. */
  bullmqTwoHops: Cost;
  /** CPU of the SES SDK's call alone (a process doing nothing else), µs per message. */
  espCallMicros: number;
  /** Fleet CPU per message less the ESP call, µs. */
  fleetMicrosWithoutEsp: number;
  /** One Redis core's ceiling: 10⁶ ÷ Sluice's Redis µs per message. */
  oneRedisPerSec: number;
}

/** What {@link snapshot} read. */
export interface Snapshot {
  cpuMicros: number;
  commands: Map<string, { calls: number; usec: number }>;
  bytesIn: number;
  bytesOut: number;
  processTicks: number;
}

const CLOCK_TICKS = 100; // Linux USER_HZ: /proc/<pid>/stat counts CPU in hundredths of a second

/** utime + stime of a process, in clock ticks (`/proc/<pid>/stat`, fields 14 and 15). */
export function processTicks(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return Number(fields[11]) + Number(fields[12]);
}

/** Redis's CPU, commands and bytes so far, and the CPU of `pids`. */
export async function snapshot(redis: Redis, pids: readonly number[]): Promise<Snapshot> {
  const info = await redis.info('all');
  const field = (name: string): number => Number(new RegExp(`^${name}:([\\d.]+)`, 'm').exec(info)![1]);
  const commands = new Map<string, { calls: number; usec: number }>();
  for (const m of info.matchAll(/^cmdstat_([^:]+):calls=(\d+),usec=(\d+)/gm)) {
    commands.set(m[1]!, { calls: Number(m[2]), usec: Number(m[3]) });
  }
  return {
    cpuMicros: (field('used_cpu_user') + field('used_cpu_sys')) * 1e6,
    commands,
    bytesIn: field('total_net_input_bytes'),
    bytesOut: field('total_net_output_bytes'),
    processTicks: pids.reduce((sum, pid) => sum + processTicks(pid), 0),
  };
}

const SCRIPTS = new Set(['evalsha', 'eval', 'fcall', 'evalsha_ro', 'eval_ro', 'fcall_ro']);

/** The difference of two snapshots per message; the measuring `INFO` calls left out. */
export function costOf(before: Snapshot, after: Snapshot, messages: number): Cost {
  const per = (n: number): number => n / messages;
  const deltas = [...after.commands]
    .filter(([name]) => name !== 'info')
    .map(([command, a]) => {
      const b = before.commands.get(command) ?? { calls: 0, usec: 0 };
      return { command, calls: a.calls - b.calls, micros: a.usec - b.usec };
    })
    .filter((d) => d.calls > 0);
  const sum = (pick: (d: (typeof deltas)[number]) => number, only = (_: string) => true): number =>
    deltas.filter((d) => only(d.command)).reduce((s, d) => s + pick(d), 0);
  return {
    redisMicros: per(after.cpuMicros - before.cpuMicros),
    // A script's own call is not a command of its own: the commands it ran are counted.
    commands: per(
      sum(
        (d) => d.calls,
        (c) => !SCRIPTS.has(c),
      ),
    ),
    scripts: per(
      sum(
        (d) => d.calls,
        (c) => SCRIPTS.has(c),
      ),
    ),
    bytesIn: per(after.bytesIn - before.bytesIn),
    bytesOut: per(after.bytesOut - before.bytesOut),
    processMicros: per(((after.processTicks - before.processTicks) * 1e6) / CLOCK_TICKS),
    top: deltas
      .sort((x, y) => y.micros - x.micros)
      .slice(0, 12)
      .map((d) => ({ command: d.command, calls: per(d.calls), micros: per(d.micros) })),
  };
}

/**
 * Redis work, bytes and process CPU per message: Sluice end to end (`sendBulk` → scheduler →
 * dispatch → worker → SES SDK → sandbox → final record; 1 scheduler, 2 workers, quotas far above
 * the load) against bare BullMQ moving the same jobs through two queues with three processes,
 * each on a Redis of its own. Measured from before the first enqueue until every record is final.
 */
export async function benchCost(messages: number): Promise<CostFigures> {
  const sluice = await sluiceCost(messages);
  const bullmqTwoHops = await twoHopCost(messages);
  const espCallMicros = await sdkAloneMicros(messages);
  return {
    messages,
    sluice,
    bullmqTwoHops,
    espCallMicros,
    fleetMicrosWithoutEsp: sluice.processMicros - espCallMicros,
    oneRedisPerSec: 1e6 / sluice.redisMicros,
  };
}

/** A run on its own Redis: the Redis and its key prefix, the measured processes, and `go`, which moves the messages and resolves once they are through. */
export interface Run<T> {
  redis: Redis;
  prefix: string;
  pids: number[];
  go: () => Promise<T>;
}

/** The bench's messages in sends of 1,000, to 50 domains. */
const batches = (messages: number): ReturnType<typeof bulk>[] =>
  Array.from({ length: Math.ceil(messages / 1000) }, (_, b) =>
    bulk(Math.min(1000, messages - b * 1000), (k) => `d${(b * 1000 + k) % 50}.test`),
  );

/** A warmed-up fleet of 1 scheduler and 2 workers on a Redis of its own, for `use`; stopped after. */
export async function withOwnFleet<R>(
  options: { config: Record<string, unknown>; keep: 'counts' | 'messages' },
  use: (run: { redis: Redis; fleet: Fleet; pids: number[] }) => Promise<R>,
): Promise<R> {
  const server = await startRedisServer();
  const redis = new Redis(server.url);
  const fleet = await startFleet({ redisUrl: server.url, schedulers: 1, workers: 2, ...options });
  try {
    await warmUp(fleet);
    return await use({ redis, fleet, pids: fleet.processes.map((p) => p.child.pid!) });
  } finally {
    await fleet.stop();
    await redis.quit();
    await server.stop();
  }
}

/**
 * Sluice's side: 1 scheduler and 2 workers, quotas far above the load, on a Redis of their
 * own, warmed up. `go` sends the messages and resolves with their ids once all arrived.
 */
export async function withSluiceRun<R>(messages: number, measure: (run: Run<string[]>) => Promise<R>): Promise<R> {
  return withOwnFleet({ config: UNLIMITED, keep: 'counts' }, ({ redis, fleet, pids }) =>
    measure({
      redis,
      prefix: fleet.prefix,
      pids,
      async go() {
        const arrived = fleet.sandbox.stats().accepted;
        const ids: string[] = [];
        for (const batch of batches(messages)) for (const s of await fleet.client.sendBulk(batch)) ids.push(s.id);
        await waitFor(() => fleet.sandbox.stats().accepted >= arrived + messages, 600_000, 'every arrival');
        return ids;
      },
    }),
  );
}

/**
 * The baseline's side: bare BullMQ moving the same jobs through two queues (`addBulk` → a
 * `Worker` adding each to a second queue → a no-op `Worker`; 3 processes) on a Redis of its
 * own. `go` adds the jobs and resolves once all completed the second hop.
 */
export async function withTwoHopRun<R>(messages: number, measure: (run: Run<void>) => Promise<R>): Promise<R> {
  const server = await startRedisServer();
  const redis = new Redis(server.url);
  const prefix = 'bench-2hop';
  const queue = new Queue('hop1', { connection: redis, prefix });
  const done = new Queue('hop2', { connection: redis, prefix });
  const children = await Promise.all(
    Array.from({ length: 3 }, () => spawnTs('two-hop-worker.ts', [server.url, prefix, '32'])),
  );
  try {
    return await measure({
      redis,
      prefix,
      pids: children.map((c) => c.pid!),
      async go() {
        for (const batch of batches(messages)) await queue.addBulk(batch.map((data) => ({ name: 'send', data })));
        while ((await done.getCompletedCount()) < messages) await sleep(20);
      },
    });
  } finally {
    await stopAll(children);
    await queue.close();
    await done.close();
    await redis.quit();
    await server.stop();
  }
}

function sluiceCost(messages: number): Promise<Cost> {
  return withSluiceRun(messages, async ({ redis, prefix, pids, go }) => {
    const before = await snapshot(redis, pids);
    const ids = await go();
    const keys = createKeys(prefix);
    // The last records written are the last to turn final: wait for those, then measure.
    await waitFor(() => allFinal(redis, keys, ids.slice(-200)), 30_000, 'the last records final');
    const after = await snapshot(redis, pids);
    if (!(await allFinal(redis, keys, ids))) throw new Error('cost: a record is not final after its arrival');
    return costOf(before, after, messages);
  });
}

/** Whether every record of `ids` is `sent`. */
export async function allFinal(
  redis: Redis,
  keys: ReturnType<typeof createKeys>,
  ids: readonly string[],
): Promise<boolean> {
  const pipeline = redis.pipeline();
  for (const id of ids) pipeline.hget(keys.message(id), 'state');
  const states = (await pipeline.exec())!.map(([, state]) => state);
  return states.every((s) => s === 'sent');
}

function twoHopCost(messages: number): Promise<Cost> {
  return withTwoHopRun(messages, async ({ redis, pids, go }) => {
    const before = await snapshot(redis, pids);
    await go();
    return costOf(before, await snapshot(redis, pids), messages);
  });
}

/** CPU µs per message of a process that only makes the SES SDK's calls, to a sandbox here. */
async function sdkAloneMicros(messages: number): Promise<number> {
  const sandbox = await createSandbox({ keep: 'counts' });
  try {
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ['--import', 'tsx', resolve(import.meta.dirname, 'sdk-alone.ts'), sandbox.url, String(messages)],
      { cwd: resolve(import.meta.dirname, '../..') },
    );
    const done = JSON.parse(stdout.trim().split('\n').at(-1)!) as { cpuMicros: number };
    return done.cpuMicros / messages;
  } finally {
    await sandbox.close();
  }
}

const us = (n: number): string => `${n.toFixed(0)} µs`;

/** The cost scenario's rows of the bench table. */
export function costRows(c: CostFigures): Row[] {
  const { sluice: s, bullmqTwoHops: b } = c;
  const ratio = (x: number, y: number): string => `${(x / y).toFixed(2)}×`;
  return [
    [
      'cost: Redis CPU per message',
      us(s.redisMicros),
      `${us(b.redisMicros)} (BullMQ two hops)`,
      ratio(s.redisMicros, b.redisMicros),
      '≤ 1.5×',
    ],
    [
      'cost: Redis commands per message',
      s.commands.toFixed(1),
      `${b.commands.toFixed(1)} (BullMQ two hops)`,
      ratio(s.commands, b.commands),
      '≤ 1.5×',
    ],
    [
      'cost: scripts per message',
      s.scripts.toFixed(1),
      `${b.scripts.toFixed(1)} (BullMQ two hops)`,
      ratio(s.scripts, b.scripts),
      'context',
    ],
    [
      'cost: bytes to / from Redis per message',
      `${s.bytesIn.toFixed(0)} / ${s.bytesOut.toFixed(0)} B`,
      `${b.bytesIn.toFixed(0)} / ${b.bytesOut.toFixed(0)} B (BullMQ two hops)`,
      ratio(s.bytesIn + s.bytesOut, b.bytesIn + b.bytesOut),
      'context',
    ],
    [
      'cost: fleet CPU per message, ESP call apart',
      us(c.fleetMicrosWithoutEsp),
      `${us(c.espCallMicros)} the SES call alone; ${us(b.processMicros)} BullMQ two hops`,
      ratio(c.fleetMicrosWithoutEsp, b.processMicros),
      '≤ 500 µs',
    ],
    [
      'cost: one Redis core’s ceiling',
      `${fmt(c.oneRedisPerSec)}/s`,
      `${fmt(1e6 / b.redisMicros)}/s (BullMQ two hops)`,
      ratio(b.redisMicros, s.redisMicros),
      'context',
    ],
  ];
}

/** The cost scenario in bench-results.json. */
export function costResults(c: CostFigures): Record<string, unknown> {
  const round = (n: number): number => Math.round(n * 10) / 10;
  const shape = (x: Cost) => ({
    redisMicros: round(x.redisMicros),
    commands: round(x.commands),
    scripts: round(x.scripts),
    bytesIn: Math.round(x.bytesIn),
    bytesOut: Math.round(x.bytesOut),
    processMicros: round(x.processMicros),
    top: x.top.map((t) => ({ command: t.command, calls: round(t.calls), micros: round(t.micros) })),
  });
  return {
    messages: c.messages,
    sluice: shape(c.sluice),
    bullmqTwoHops: shape(c.bullmqTwoHops),
    espCallMicros: round(c.espCallMicros),
    fleetMicrosWithoutEsp: round(c.fleetMicrosWithoutEsp),
    oneRedisPerSec: Math.round(c.oneRedisPerSec),
  };
}

/**
 * Where Sluice's Redis time goes: its costliest commands per message, one line. A script's
 * time (`evalsha`) includes the commands it runs, which are also listed on their own.
 */
export function costTop(c: CostFigures): string {
  const line = (x: Cost): string =>
    x.top.map((t) => `${t.command} ${t.calls.toFixed(1)}× ${t.micros.toFixed(0)} µs`).join(', ');
  return `${line(c.sluice)}; BullMQ two hops: ${line(c.bullmqTwoHops)} (evalsha's time includes its commands')`;
}
