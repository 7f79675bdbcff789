import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { freePort } from './redis-server.js';

// A Redis Cluster of private redis-servers on loopback (issue 31), for tests and benchmarks:
// started with `redis-cli --cluster create`, and able to lose a master, fail over and take the
// old master back as a replica. Each node has its own client port and bus port (both from
// freePort: the default bus port, port + 10000, would land in the kernel's ephemeral range).

/** Options of {@link startRedisCluster}. */
export interface RedisClusterOptions {
  /** @defaultValue 3 */
  masters?: number;
  /** Replicas of each master. @defaultValue 1 */
  replicas?: number;
  /**
   * `cluster-node-timeout`: how long a node may be unreachable before it is failed, so a
   * failover takes about two to three times this. @defaultValue 1000
   */
  nodeTimeoutMs?: number;
  /** How long the cluster may take to settle (start, failover, a node's return). @defaultValue 30_000 */
  settleTimeoutMs?: number;
}

/** One node as it is now. */
export interface ClusterNodeState {
  port: number;
  /** `down` once killed, until restarted. */
  role: 'master' | 'replica' | 'down';
  /** The running process's pid (the last one's when down). */
  pid: number | undefined;
}

/** What {@link RedisCluster.waitForFailover} found. */
export interface Failover {
  /** The replica now serving the killed master's slots. */
  promoted: number;
  /** From the kill to `cluster_state:ok` everywhere with the slots on the promoted replica. */
  ms: number;
}

/** A running local Redis Cluster. */
export interface RedisCluster {
  /** `redis://127.0.0.1:<port>` of every node: the seeds a client is given. */
  readonly seeds: string[];
  /** Every node's port, role and pid, asked of the nodes now. */
  nodes(): Promise<ClusterNodeState[]>;
  /** The port of the master serving `key`'s slot now. */
  masterOf(key: string): Promise<number>;
  /** SIGKILLs the master on `port`; resolves once it has exited. */
  killMaster(port: number): Promise<void>;
  /** Resolves once a replica of the killed master on `port` serves its slots and every node says `cluster_state:ok`. */
  waitForFailover(port: number): Promise<Failover>;
  /** Starts a killed node again on its port and config; resolves once it is back as a replica, in sync. */
  restart(port: number): Promise<void>;
  /**
   * Each master's calls in `INFO commandstats`, by port: every command but the introspection
   * that this helper and the clients' topology checks send (`CLUSTER`, `INFO`, `ROLE`,
   * `CLIENT`, `COMMAND`, `HELLO`, `PING`, `CONFIG`), so a benchmark sees its own load.
   */
  commandsPerMaster(): Promise<Map<number, number>>;
  /** Every pid this cluster has started (the test's leak check: none may run after `stop`). */
  pids(): number[];
  /** Stops every node (SIGTERM, SIGKILL after 5 s) and removes the data directories. */
  stop(): Promise<void>;
}

interface Node {
  port: number;
  busPort: number;
  dir: string;
  child: ChildProcess;
}

/** Commands left out of {@link RedisCluster.commandsPerMaster}. */
const INTROSPECTION = new Set(['cluster', 'info', 'role', 'client', 'command', 'hello', 'ping', 'config']);

const running = (child: ChildProcess) => child.exitCode === null && child.signalCode === null;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function spawnNode(node: Omit<Node, 'child'>, nodeTimeoutMs: number): Promise<ChildProcess> {
  const args = [
    ['--port', node.port],
    ['--bind', '127.0.0.1'],
    ['--save', ''],
    ['--appendonly', 'no'],
    ['--dir', node.dir],
    ['--maxmemory-policy', 'noeviction'],
    ['--cluster-enabled', 'yes'],
    ['--cluster-config-file', join(node.dir, 'nodes.conf')],
    ['--cluster-node-timeout', nodeTimeoutMs],
    ['--cluster-port', node.busPort],
    // A replica's first sync starts at once instead of after the default 5 s.
    ['--repl-diskless-sync-delay', 0],
  ].flatMap(([k, v]) => [String(k), String(v)]);
  const child = spawn('redis-server', args, { stdio: ['ignore', 'pipe', 'pipe'] });
  return new Promise((resolve, reject) => {
    let out = '';
    child.once('error', (err) => reject(new Error(`cannot start redis-server (put it on the PATH): ${err.message}`)));
    // Read to the end (a full pipe would block the server); keep the tail for errors.
    child.stdout.on('data', (chunk: Buffer) => {
      out = (out + chunk.toString()).slice(-4000);
      if (out.includes('Ready to accept connections')) resolve(child);
    });
    child.stderr.on('data', (chunk: Buffer) => (out = (out + chunk.toString()).slice(-4000)));
    child.once('exit', (code) => reject(new Error(`redis-server on ${node.port} exited with ${code}: ${out}`)));
  });
}

/** Runs redis-cli with `args`; rejects with its output unless it exits with 0. */
function redisCli(args: string[]): Promise<string> {
  const child = spawn('redis-cli', args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (out += chunk.toString()));
  return new Promise((resolve, reject) => {
    child.once('error', (err) =>
      reject(new Error(`cannot run redis-cli (put it on the PATH; it creates the cluster): ${err.message}`)),
    );
    child.once('exit', (code) =>
      code === 0 ? resolve(out) : reject(new Error(`redis-cli ${args.join(' ')} exited with ${code}:\n${out}`)),
    );
  });
}

/** One command to one node, on a connection of its own (no retries, no ready check). */
async function ask(port: number, command: string, ...args: (string | number)[]): Promise<unknown> {
  const redis = new Redis(port, '127.0.0.1', {
    lazyConnect: true,
    enableReadyCheck: false,
    enableOfflineQueue: false,
    retryStrategy: () => null,
    maxRetriesPerRequest: 0,
    connectTimeout: 1_000,
  });
  redis.on('error', () => undefined);
  try {
    await redis.connect();
    return await redis.call(command, ...args);
  } finally {
    redis.disconnect();
  }
}

const infoField = (info: string, field: string): string | undefined =>
  new RegExp(`^${field}:(.*)$`, 'm').exec(info)?.[1]?.trim();

type SlotRange = [start: number, end: number, master: [host: string, port: number, ...rest: unknown[]], ...unknown[]];

/** `CLUSTER SLOTS` as `start-end:masterPort,…`, sorted: equal on two nodes when they agree. */
function slotMap(slots: SlotRange[]): string {
  return slots
    .map(([start, end, master]) => [start, end, master[1]] as const)
    .sort((a, b) => a[0] - b[0])
    .map(([start, end, port]) => `${start}-${end}:${port}`)
    .join(',');
}

/** One node's view, or `undefined` when it does not answer. */
interface NodeView {
  port: number;
  info: string;
  map: string;
  role: 'master' | 'replica';
  /** A replica's master port and whether its replication link is up. */
  master?: { port: number; linkUp: boolean };
}

async function viewOf(port: number): Promise<NodeView | undefined> {
  try {
    const info = String(await ask(port, 'CLUSTER', 'INFO'));
    const map = slotMap((await ask(port, 'CLUSTER', 'SLOTS')) as SlotRange[]);
    const replication = String(await ask(port, 'INFO', 'replication'));
    if (infoField(replication, 'role') === 'master') return { port, info, map, role: 'master' };
    return {
      port,
      info,
      map,
      role: 'replica',
      master: {
        port: Number(infoField(replication, 'master_port')),
        linkUp: infoField(replication, 'master_link_status') === 'up',
      },
    };
  } catch {
    return undefined;
  }
}

/**
 * Whether the running nodes agree: every one answers with `cluster_state:ok` and every slot
 * assigned, all give the same slot map, and every replica's link to its master is up.
 */
function settled(views: (NodeView | undefined)[]): views is NodeView[] {
  const maps = new Set(views.map((v) => v?.map));
  return (
    maps.size === 1 &&
    views.every(
      (v) =>
        v !== undefined &&
        infoField(v.info, 'cluster_state') === 'ok' &&
        infoField(v.info, 'cluster_slots_assigned') === '16384' &&
        (v.master === undefined || v.master.linkUp),
    )
  );
}

/**
 * Starts a Redis Cluster of `masters × (1 + replicas)` private redis-servers (noeviction, no
 * persistence, a temporary directory each) and resolves once it has settled: `cluster_state:ok`
 * on every node, one slot map, every replica in sync. Rejects with the reason (a binary
 * missing, `redis-cli`'s output, the last `CLUSTER INFO` of a cluster that never settled),
 * after stopping what it started.
 */
export async function startRedisCluster(options: RedisClusterOptions = {}): Promise<RedisCluster> {
  const masters = options.masters ?? 3;
  const replicas = options.replicas ?? 1;
  const nodeTimeoutMs = options.nodeTimeoutMs ?? 1_000;
  const settleTimeoutMs = options.settleTimeoutMs ?? 30_000;
  if (masters < 3) throw new Error(`a Redis Cluster needs at least 3 masters, got ${masters}`);
  const root = mkdtempSync(join(tmpdir(), 'sluice-cluster-'));
  const nodes = new Map<number, Node>();
  const pids = new Set<number>();
  const killed = new Map<number, { at: number; replicas: number[] }>();

  const live = () => [...nodes.values()].filter((n) => running(n.child));
  const start = async (node: Omit<Node, 'child'>): Promise<void> => {
    const child = await spawnNode(node, nodeTimeoutMs);
    if (child.pid !== undefined) pids.add(child.pid);
    nodes.set(node.port, { ...node, child });
  };

  /** Polls until `done` holds for the running nodes' views; rejects naming `what` with the last views. */
  async function settle(what: string, done: (views: NodeView[]) => boolean): Promise<NodeView[]> {
    const deadline = Date.now() + settleTimeoutMs;
    let last: (NodeView | undefined)[] = [];
    while (Date.now() < deadline) {
      last = await Promise.all(live().map((n) => viewOf(n.port)));
      if (settled(last) && done(last)) return last;
      await sleep(50);
    }
    const states = last.map((v, i) =>
      v === undefined
        ? `${live()[i]?.port}: no answer`
        : `${v.port} (${v.role}${v.master ? ` of ${v.master.port}, link ${v.master.linkUp ? 'up' : 'down'}` : ''}):\n${v.info.trim()}`,
    );
    throw new Error(`${what} within ${settleTimeoutMs / 1000} s; last CLUSTER INFO:\n${states.join('\n')}`);
  }

  async function stop(): Promise<void> {
    await Promise.all(
      [...nodes.values()].map(async ({ child }) => {
        if (!running(child)) return;
        const exited = new Promise((r) => child.once('exit', r));
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
        await exited;
        clearTimeout(timer);
      }),
    );
    rmSync(root, { recursive: true, force: true });
  }

  try {
    for (let i = 0; i < masters * (1 + replicas); i++) {
      const port = await freePort();
      const busPort = await freePort();
      const dir = join(root, String(port));
      mkdirSync(dir);
      await start({ port, busPort, dir });
    }
    await redisCli([
      '--cluster',
      'create',
      ...[...nodes.keys()].map((port) => `127.0.0.1:${port}`),
      '--cluster-replicas',
      String(replicas),
      '--cluster-yes',
    ]);
    await settle('the cluster never became ok', (views) => views.length === nodes.size);
  } catch (err) {
    await stop();
    throw err;
  }

  const role = async (port: number): Promise<'master' | 'replica'> => {
    const [name] = (await ask(port, 'ROLE')) as [string];
    return name === 'master' ? 'master' : 'replica';
  };
  const anyLive = (): number => {
    const node = live()[0];
    if (!node) throw new Error('no node of the cluster is running');
    return node.port;
  };

  return {
    seeds: [...nodes.keys()].map((port) => `redis://127.0.0.1:${port}`),
    async nodes() {
      return Promise.all(
        [...nodes.values()].map(async (n) => ({
          port: n.port,
          role: running(n.child) ? await role(n.port) : ('down' as const),
          pid: n.child.pid,
        })),
      );
    },
    async masterOf(key) {
      const port = anyLive();
      const slot = Number(await ask(port, 'CLUSTER', 'KEYSLOT', key));
      const ranges = (await ask(port, 'CLUSTER', 'SLOTS')) as SlotRange[];
      const range = ranges.find(([start, end]) => slot >= start && slot <= end);
      if (!range) throw new Error(`slot ${slot} (of ${JSON.stringify(key)}) is served by no node`);
      return range[2][1];
    },
    async killMaster(port) {
      const node = nodes.get(port);
      if (!node || !running(node.child)) throw new Error(`no node of the cluster is running on ${port}`);
      if ((await role(port)) !== 'master') throw new Error(`the node on ${port} is a replica, not a master`);
      // Its replicas as they see themselves (a master learns of a new replica by gossip, so its own
      // CLUSTER REPLICAS can still be empty just after the cluster settled), and as the cluster's
      // config has them: a replica whose link is down still takes over.
      const views = await settle(`no replica of ${port} is attached`, (all) =>
        all.some((v) => v.master?.port === port),
      );
      const id = String(await ask(port, 'CLUSTER', 'MYID'));
      const replicaLines = (await ask(port, 'CLUSTER', 'REPLICAS', id)) as string[];
      const replicaPorts = [
        ...new Set([
          ...views.filter((v) => v.master?.port === port).map((v) => v.port),
          ...replicaLines.map((line) => Number(/:(\d+)@/.exec(line)?.[1])),
        ]),
      ];
      const exited = new Promise((r) => node.child.once('exit', r));
      node.child.kill('SIGKILL');
      await exited;
      killed.set(port, { at: Date.now(), replicas: replicaPorts });
    },
    async waitForFailover(port) {
      const kill = killed.get(port);
      if (!kill) throw new Error(`the master on ${port} was not killed by killMaster`);
      if (kill.replicas.length === 0) throw new Error(`the master on ${port} had no replica to fail over to`);
      let promoted = 0;
      await settle(`no replica of ${port} took over its slots`, (views) => {
        const ports = new Set(views[0]!.map.split(',').map((range) => Number(range.split(':')[1])));
        const found = views.find((v) => v.role === 'master' && kill.replicas.includes(v.port) && ports.has(v.port));
        promoted = found?.port ?? 0;
        return found !== undefined && !ports.has(port);
      });
      return { promoted, ms: Date.now() - kill.at };
    },
    async restart(port) {
      const node = nodes.get(port);
      if (!node) throw new Error(`no node of the cluster on ${port}`);
      if (running(node.child)) throw new Error(`the node on ${port} is still running: kill it before restarting it`);
      await start(node);
      killed.delete(port);
      await settle(`the node on ${port} never came back as a replica`, (views) =>
        views.some((v) => v.port === port && v.role === 'replica'),
      );
    },
    async commandsPerMaster() {
      const counts = new Map<number, number>();
      for (const node of live()) {
        if ((await role(node.port)) !== 'master') continue;
        const stats = String(await ask(node.port, 'INFO', 'commandstats'));
        const calls = [...stats.matchAll(/^cmdstat_([^:|]+)[^:]*:calls=(\d+)/gm)]
          .filter((m) => !INTROSPECTION.has(m[1]!))
          .reduce((sum, m) => sum + Number(m[2]), 0);
        counts.set(node.port, calls);
      }
      return counts;
    },
    pids: () => [...pids],
    stop,
  };
}
