import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Cluster, Redis } from 'ioredis';
import { createClient, type SluiceClient } from '@sluice/client';
import { createSandbox, type Keep, type Sandbox, type SandboxOptions } from '@sluice/sandbox';
import { bundleApps, type BundledApp } from './app-bundle.js';
import { fromSources, startProcess, type TestProcess } from './process.js';

/** This process's bundle of the apps, for a fleet not given one (made once, removed at exit). */
let bundled: Promise<string> | undefined;
function ownBundles(): Promise<string> {
  bundled ??= (async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sluice-apps-'));
    process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
    await bundleApps(dir);
    return dir;
  })();
  return bundled;
}

/** A Sluice process started by a test. */
export type FleetProcess = TestProcess;

/** Options of {@link startFleet}. */
export interface FleetOptions {
  redisUrl: string;
  /**
   * A Redis Cluster's seed URLs: the fleet's queues and limiter live there (`redis.queues`,
   * `redis.limiter`), with one dispatch partition per master, and the test's own connection and
   * client are cluster clients. `redisUrl` is then only the processes' `REDIS_URL`.
   */
  cluster?: readonly string[] | undefined;
  /** A directory made by `bundleApps` (the test run's); without it, this process makes its own. */
  apps?: string;
  /**
   * Merged over the base config (the fleet's prefix and sandbox are set for you); a function
   * is given the sandbox (to point a real provider's endpoint at it).
   */
  config?: Record<string, unknown> | ((sandbox: Sandbox) => Record<string, unknown>);
  /** The sandbox's own options (credentials it expects), beside `scenario` and `keep`. */
  sandboxOptions?: Pick<SandboxOptions, 'accessKeyId' | 'sessionToken'>;
  /** On top of this process's environment, for every process of the fleet. */
  env?: Record<string, string>;
  /** The fleet client's fleet check (`off` to queue with no process started). @defaultValue `'error'` */
  fleetCheck?: 'error' | 'off';
  /** The sandbox's scenario. */
  scenario?: unknown;
  /** What the sandbox keeps of each message (`'counts'` for a campaign of millions). */
  keep?: Keep;
  schedulers?: number;
  workers?: number;
}

/** A private fleet: sandbox (in this process), schedulers and workers (real processes), a client. */
export interface Fleet {
  readonly prefix: string;
  readonly sandbox: Sandbox;
  readonly client: SluiceClient;
  readonly redis: Redis;
  /** The directory of the bundled apps and test entries (`<apps>/<entry>.mjs`). */
  readonly apps: string;
  readonly processes: FleetProcess[];
  startScheduler(): Promise<FleetProcess>;
  /** Starts the api (from the bundle) or the admin app (from its sources) on the fleet's config. */
  startApp(app: 'api' | 'admin'): Promise<FleetProcess>;
  /**
   * Starts a worker; `entry` another bundled one (`crash-worker`), `env` on top of the
   * fleet's environment.
   */
  startWorker(options?: { entry?: BundledApp; env?: Record<string, string> }): Promise<FleetProcess>;
  /** Stops every process (SIGTERM), the client and the sandbox, and deletes the fleet's keys. */
  stop(): Promise<void>;
}

/** The URL an api process logged it listens on (`api listening`). */
export function apiBase(api: FleetProcess): string {
  const address = /"address":"(http:\/\/[^"]+)"/.exec(api.output())?.[1];
  if (address === undefined) throw new Error(`the api logged no address:\n${api.output()}`);
  return address;
}

/** Polls until `check` returns a truthy value, or throws after `timeoutMs`. */
export async function waitFor<T>(
  check: () => Promise<T> | T,
  timeoutMs: number,
  what = 'condition',
): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

function spawnApp(apps: string, app: BundledApp, env: NodeJS.ProcessEnv): Promise<FleetProcess> {
  return startProcess(app, ['--enable-source-maps', join(apps, `${app}.mjs`)], env, '"event":"ready"');
}

/** A cluster client for a test, typed as a Redis (it answers the same commands). */
function clusterClient(seeds: readonly string[]): Redis {
  const cluster = new Cluster(
    seeds.map((s) => {
      const u = new URL(s);
      return { host: u.hostname, port: Number(u.port) };
    }),
    { redisOptions: { maxRetriesPerRequest: 3 } },
  );
  cluster.on('error', () => undefined);
  return cluster as unknown as Redis;
}

/** Deletes the keys of one node that match `pattern`, through `via` (one key a command: their slots differ). */
async function deleteMatching(node: Redis, via: Redis, pattern: string): Promise<void> {
  let cursor = '0';
  do {
    const [next, found] = await node.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
    cursor = next;
    if (found.length) await Promise.all(found.map((key) => via.del(key)));
  } while (cursor !== '0');
}

/** Starts a fleet with its own key prefix on the given Redis. */
export async function startFleet(options: FleetOptions): Promise<Fleet> {
  const prefix = `t${randomUUID().slice(0, 8)}`;
  const apps = options.apps ?? (await ownBundles());
  const sandbox = await createSandbox({
    scenario: options.scenario ?? {},
    keep: options.keep,
    ...options.sandboxOptions,
  });
  const dir = mkdtempSync(join(tmpdir(), 'sluice-fleet-'));
  const configPath = join(dir, 'sluice.yaml');
  const given = typeof options.config === 'function' ? options.config(sandbox) : options.config;
  const config = {
    ...given,
    // The fleet's Redis and prefix; a test may add roles (`limiter`, `queues`) and partitions.
    redis: {
      ...(options.cluster
        ? { queues: { cluster: options.cluster }, limiter: { cluster: options.cluster }, dispatchPartitions: 3 }
        : {}),
      ...(given?.redis as object | undefined),
      url: options.redisUrl,
      prefix,
    },
    sandbox: { url: sandbox.url, smtpPort: sandbox.smtpPort },
    worker: {
      lockDurationMs: 4_000,
      stalledIntervalMs: 1_000,
      ...(given?.worker as object | undefined),
    },
  };
  writeFileSync(configPath, JSON.stringify(config, null, 2)); // JSON is YAML
  const env = { ...process.env, ...options.env, SLUICE_CONFIG: configPath, REDIS_URL: options.redisUrl };
  // On a cluster, a cluster client typed as a Redis (it answers the same commands).
  const redis = options.cluster ? clusterClient(options.cluster) : new Redis(options.redisUrl);
  // Its failures reach the test through the commands that fail; ioredis would print each one too.
  redis.on('error', () => undefined);
  const clientRedis = options.cluster ? clusterClient(options.cluster) : options.redisUrl;
  const client = createClient({ redis: clientRedis, prefix, fleetCheck: options.fleetCheck ?? 'error' });
  const processes: FleetProcess[] = [];

  const fleet: Fleet = {
    prefix,
    sandbox,
    client,
    redis,
    apps,
    processes,
    async startScheduler() {
      const p = await spawnApp(apps, 'scheduler', env);
      processes.push(p);
      return p;
    },
    async startApp(app) {
      const p =
        app === 'api'
          ? await spawnApp(apps, 'api', env)
          : await startProcess('admin', fromSources('admin'), env, '"event":"ready"');
      processes.push(p);
      return p;
    },
    async startWorker(start = {}) {
      const p = await spawnApp(apps, start.entry ?? 'worker', { ...env, ...start.env });
      processes.push(p);
      return p;
    },
    async stop() {
      await Promise.all(processes.map((p) => p.stop('SIGTERM')));
      await client.close();
      if (typeof clientRedis !== 'string') await clientRedis.quit();
      await sandbox.close();
      // Every master's keys (a cluster's SCAN covers one node); a node killed by the test is passed by.
      const nodes = options.cluster
        ? (redis as unknown as Cluster).nodes('master').filter((n) => n.status === 'ready')
        : [redis];
      for (const node of nodes) await deleteMatching(node, redis, `*${prefix}*`);
      await redis.quit();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  try {
    await Promise.all([
      ...Array.from({ length: options.schedulers ?? 1 }, () => fleet.startScheduler()),
      ...Array.from({ length: options.workers ?? 1 }, () => fleet.startWorker()),
    ]);
  } catch (err) {
    await fleet.stop();
    throw err;
  }
  return fleet;
}

/** The most arrivals in any window of `windowMs` (sliding, anchored at each arrival). */
export function maxInWindow(times: readonly number[], windowMs = 1000): number {
  const t = [...times].sort((a, b) => a - b);
  let best = 0;
  let j = 0;
  for (let i = 0; i < t.length; i++) {
    while (t[i]! - t[j]! >= windowMs) j++;
    best = Math.max(best, i - j + 1);
  }
  return best;
}

/**
 * The guard-rail a fleet test holds a 1 s peak of arrivals to: the limit and its burst, plus a
 * fifth of the rate for a loaded machine's jitter (a process 200 ms late sends together with
 * those on time). A limit that is not shared, or stale slots let go at once, cross it by far;
 * the tight figure (at most 1% over limit + burst) is `pnpm bench`'s `accuracy`.
 */
export function peakGuard(rate: number, burst: number): number {
  return rate + burst + Math.ceil(rate / 5);
}
