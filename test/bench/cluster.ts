import { Redis } from 'ioredis';
import { startFleet, waitFor, type Fleet } from '../support/fleet.js';
import { startRedisCluster } from '../support/redis-cluster.js';
import { startRedisServer } from '../support/redis-server.js';
import { UNLIMITED } from './campaign-run.js';
import { fmt, round, type Row, warmUp } from './support.js';

// Issue 31's mixed workload on one Redis, on a three-master Redis Cluster, and on the cluster
// with the limiter on a Redis of its own: 20 campaigns, 50 receivers, every class. Per run:
// Redis CPU and commands per message (every node summed), and each master's share of the
// commands.

/** 50 receivers, each its own organisation and domain, with room far above the load. */
const RECEIVERS = Array.from({ length: 50 }, (_, i) => ({
  name: `r${i}`,
  domains: [`r${i}.test`],
  rate: 100_000,
  burst: 10_000,
  connections: 64,
}));
const CLASSES = ['critical', 'high', 'normal', 'low'] as const;

/** What one Redis node spent: CPU (µs) and commands (the measuring INFO left out). */
interface NodeUse {
  cpuMicros: number;
  commands: number;
}

async function nodeUse(redis: Redis): Promise<NodeUse> {
  const info = await redis.info('all');
  const field = (name: string): number => Number(new RegExp(`^${name}:([\\d.]+)`, 'm').exec(info)![1]);
  let commands = 0;
  for (const m of info.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) {
    if (!['info', 'cluster', 'ping', 'client', 'command', 'hello', 'config', 'role'].includes(m[1]!))
      commands += Number(m[2]);
  }
  return { cpuMicros: (field('used_cpu_user') + field('used_cpu_sys')) * 1e6, commands };
}

/** One run's figures. */
export interface ClusterRun {
  name: string;
  messages: number;
  /** Redis CPU per message over every node of the run (µs). */
  redisMicros: number;
  /** Commands per message over every node. */
  commands: number;
  /** Each master's share of the queues' commands (the limiter's own Redis apart), largest first. */
  masterShares: number[];
  /** The limiter's own Redis, when it has one: CPU and commands per message. */
  limiter?: { redisMicros: number; commands: number } | undefined;
  seconds: number;
}

/** Figures of the cluster scenario. */
export interface ClusterFigures {
  runs: ClusterRun[];
}

/** The mixed workload: `messages` over 20 campaigns and transactional mail of every class, to 50 receivers. */
async function sendMixed(fleet: Fleet, messages: number): Promise<void> {
  for (let c = 0; c < 20; c++) await fleet.client.campaigns.create({ id: `camp${c}`, priority: 'low' });
  const before = fleet.sandbox.stats().accepted;
  for (let start = 0; start < messages; start += 1000) {
    const batch = Array.from({ length: Math.min(1000, messages - start) }, (_, k) => {
      const i = start + k;
      const campaign = i % 2 === 0 ? { campaignId: `camp${(i / 2) % 20}` } : { priority: CLASSES[i % 4] };
      return { from: 'bench@acme.test', to: `u${i}@r${i % 50}.test`, subject: 'bench', text: 'hello', ...campaign };
    });
    await fleet.client.sendBulk(batch);
  }
  await waitFor(() => fleet.sandbox.stats().accepted >= before + messages, 600_000, 'every arrival');
}

/** Runs the workload on a fleet and measures the given nodes. */
async function measure(
  name: string,
  messages: number,
  fleet: Fleet,
  queueNodes: Redis[],
  limiterNode?: Redis,
): Promise<ClusterRun> {
  await warmUp(fleet);
  const before = await Promise.all(queueNodes.map(nodeUse));
  const limiterBefore = limiterNode ? await nodeUse(limiterNode) : undefined;
  const started = Date.now();
  await sendMixed(fleet, messages);
  const seconds = (Date.now() - started) / 1000;
  const after = await Promise.all(queueNodes.map(nodeUse));
  const limiterAfter = limiterNode ? await nodeUse(limiterNode) : undefined;
  const used = after.map((a, i) => ({
    cpu: a.cpuMicros - before[i]!.cpuMicros,
    commands: a.commands - before[i]!.commands,
  }));
  const total = used.reduce((s, u) => s + u.commands, 0);
  const limiter =
    limiterBefore && limiterAfter
      ? {
          redisMicros: (limiterAfter.cpuMicros - limiterBefore.cpuMicros) / messages,
          commands: (limiterAfter.commands - limiterBefore.commands) / messages,
        }
      : undefined;
  return {
    name,
    messages,
    redisMicros: (used.reduce((s, u) => s + u.cpu, 0) + (limiter ? limiter.redisMicros * messages : 0)) / messages,
    commands: (total + (limiter ? limiter.commands * messages : 0)) / messages,
    masterShares: used.map((u) => u.commands / total).sort((a, b) => b - a),
    limiter,
    seconds,
  };
}

const FLEET = { schedulers: 1, workers: 2, keep: 'counts' as const };
const config = (extra: Record<string, unknown> = {}) => ({ ...UNLIMITED, receivers: RECEIVERS, ...extra });

/** One Redis: the run the cluster's are set beside. */
async function oneNode(messages: number): Promise<ClusterRun> {
  const server = await startRedisServer();
  const fleet = await startFleet({ ...FLEET, redisUrl: server.url, config: config() });
  const node = new Redis(server.url);
  try {
    return await measure('one Redis', messages, fleet, [node]);
  } finally {
    await fleet.stop();
    node.disconnect();
    await server.stop();
  }
}

/** Three masters with a replica each; the limiter there too, or on a Redis of its own. */
async function onCluster(messages: number, ownLimiter: boolean): Promise<ClusterRun> {
  const cluster = await startRedisCluster();
  const limiterServer = ownLimiter ? await startRedisServer() : undefined;
  const fleet = await startFleet({
    ...FLEET,
    redisUrl: cluster.seeds[0]!,
    cluster: cluster.seeds,
    config: config(limiterServer ? { redis: { limiter: limiterServer.url } } : {}),
  });
  const masters = (await cluster.nodes()).filter((n) => n.role === 'master').map((n) => new Redis(n.port));
  const limiterNode = limiterServer ? new Redis(limiterServer.url) : undefined;
  try {
    const name = ownLimiter ? 'cluster, limiter on its own Redis' : 'cluster (3 masters)';
    return await measure(name, messages, fleet, masters, limiterNode);
  } finally {
    await fleet.stop();
    for (const m of masters) m.disconnect();
    limiterNode?.disconnect();
    await limiterServer?.stop();
    await cluster.stop();
  }
}

/** The three runs, one after another. */
export async function benchCluster(messages: number): Promise<ClusterFigures> {
  return { runs: [await oneNode(messages), await onCluster(messages, false), await onCluster(messages, true)] };
}

const one = (n: number): string => n.toFixed(1);

/** The table's rows: each run beside the one-Redis run. */
export function clusterRows(f: ClusterFigures): Row[] {
  const [base] = f.runs;
  return f.runs.flatMap((r): Row[] => {
    const versus = r === base ? '-' : `${fmt(base!.redisMicros)} µs, ${one(base!.commands)} cmds`;
    const ratio = r === base ? '-' : `${(r.redisMicros / base!.redisMicros).toFixed(2)}×`;
    const limiter = r.limiter
      ? ` (limiter's Redis ${fmt(r.limiter.redisMicros)} µs, ${one(r.limiter.commands)} cmds)`
      : '';
    const rows: Row[] = [
      [
        `mixed, ${r.name}: Redis CPU, commands a message`,
        `${fmt(r.redisMicros)} µs, ${one(r.commands)} cmds${limiter}`,
        versus,
        ratio,
        'measured',
      ],
    ];
    if (r.masterShares.length > 1) {
      const shares = r.masterShares.map((s) => `${(s * 100).toFixed(0)}%`).join(' / ');
      rows.push([
        `mixed, ${r.name}: commands per master`,
        shares,
        'an even third each',
        `${(r.masterShares[0]! * 3).toFixed(2)}×`,
        'none above 45%',
      ]);
    }
    rows.push([`mixed, ${r.name}: messages a second`, fmt(r.messages / r.seconds), '-', '-', 'measured']);
    return rows;
  });
}

/** For bench-results.json. */
export function clusterResults(f: ClusterFigures) {
  return f.runs.map((r) => ({
    name: r.name,
    messages: r.messages,
    redisMicros: round(r.redisMicros, 1),
    commands: round(r.commands, 1),
    masterShares: r.masterShares.map((s) => round(s, 3)),
    limiter: r.limiter && { redisMicros: round(r.limiter.redisMicros, 1), commands: round(r.limiter.commands, 1) },
    perSecond: round(r.messages / r.seconds),
  }));
}
