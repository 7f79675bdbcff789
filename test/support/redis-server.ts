import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Below Linux's ephemeral range (32768–60999), where the kernel picks the local port of every
 * outgoing connection: a port found free there could be taken by a client's connection before
 * the process it was meant for listens on it (seen in CI: `EADDRINUSE`).
 */
const PORTS = { first: 20_000, count: 12_000 };
/** Each vitest worker draws from a slice of its own, so two workers never pick the same port. */
const SLICES = 8;
let drawn = Math.floor(Math.random() * (PORTS.count / SLICES));

/** A free TCP port on loopback, outside the kernel's ephemeral range. */
export async function freePort(): Promise<number> {
  const slice = (Number(process.env.VITEST_POOL_ID ?? 0) % SLICES) * (PORTS.count / SLICES);
  for (let tries = 0; tries < 100; tries++) {
    const port = PORTS.first + slice + (drawn++ % (PORTS.count / SLICES));
    if (await canListen(port)) return port;
  }
  throw new Error(`no free port in ${PORTS.first}–${PORTS.first + PORTS.count} after 100 tries`);
}

function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.unref();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/** Options of {@link startRedisServer}. */
export interface RedisServerOptions {
  /** @defaultValue a free one */
  port?: number;
  /**
   * A data directory of the caller's, kept after `stop()`, with an append-only file
   * (`everysec` unless `appendfsync` says otherwise): a server started again on it has the
   * data of the last. @defaultValue a directory of its own, removed by `stop()`
   */
  dir?: string;
  /**
   * Persist to an append-only file with this fsync policy (`appendonly yes`), so the data
   * survives a kill and a {@link RedisServer.restart}. @defaultValue no persistence at all
   */
  appendfsync?: 'always' | 'everysec';
  /**
   * Run as a Redis Cluster of one node that serves every slot: plain clients work as on any
   * Redis, and the node refuses what a real cluster refuses — a command, script or `MULTI`
   * whose keys are of different slots (`CROSSSLOT`), and `SELECT`. The whole suite runs so with
   * `SLUICE_TEST_SLOTS=strict`. @defaultValue `SLUICE_TEST_SLOTS === 'strict'`
   */
  oneSlotCluster?: boolean;
}

/** A private `redis-server` (noeviction; no persistence unless asked), on a free port unless given one. */
export interface RedisServer {
  url: string;
  port: number;
  /** Its data directory (removed by `stop`, unless it was given). */
  readonly dir: string;
  /** The running server's pid (a new one after `restart`). */
  readonly pid: number | undefined;
  /** Stops the server (SIGTERM, unless it is not running) and removes its data directory. */
  stop(): Promise<void>;
  /**
   * Sends `signal` to the server. SIGKILL and SIGTERM resolve once it has exited; SIGSTOP
   * (frozen: connections stay open, commands hang) and SIGCONT resolve at once.
   */
  kill(signal?: NodeJS.Signals): Promise<void>;
  /** Starts it again on the same port and data directory, once it has exited; resolves when it is ready. */
  restart(): Promise<void>;
}

function spawnServer(port: number, dir: string, options: RedisServerOptions): Promise<ChildProcess> {
  const fsync = options.appendfsync ?? (options.dir === undefined ? undefined : 'everysec');
  const persistence = fsync ? ['--appendonly', 'yes', '--appendfsync', fsync] : ['--appendonly', 'no'];
  const child: ChildProcess = spawn(
    'redis-server',
    [
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--save',
      '',
      ...persistence,
      '--dir',
      dir,
      '--maxmemory-policy',
      'noeviction',
      ...(strictSlots(options) ? ['--cluster-enabled', 'yes', '--cluster-config-file', join(dir, 'nodes.conf')] : []),
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  return new Promise<ChildProcess>((resolve, reject) => {
    let out = '';
    child.once('error', (err) =>
      reject(new Error(`cannot start redis-server (set REDIS_URL or put redis-server on the PATH): ${err.message}`)),
    );
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      // Printed once the append-only file, if any, is loaded.
      if (out.includes('Ready to accept connections')) resolve(child);
    });
    child.once('exit', (code) => reject(new Error(`redis-server exited with ${code}: ${out}`)));
  });
}

const strictSlots = (options: RedisServerOptions): boolean =>
  options.oneSlotCluster ?? process.env.SLUICE_TEST_SLOTS === 'strict';

/** Gives the one node every slot (once: a restarted node keeps them in nodes.conf) and waits for `cluster_state:ok`. */
async function serveEverySlot(port: number): Promise<void> {
  const { Redis } = await import('ioredis');
  const redis = new Redis(port, '127.0.0.1', { lazyConnect: true });
  try {
    await redis.connect();
    const info = String(await redis.cluster('INFO'));
    if (/cluster_slots_assigned:0\b/.test(info)) await redis.call('CLUSTER', 'ADDSLOTSRANGE', '0', '16383');
    for (let i = 0; i < 200; i++) {
      if (String(await redis.cluster('INFO')).includes('cluster_state:ok')) return;
      await new Promise((r) => setTimeout(r, 25));
    }
    throw new Error(`redis-server on ${port}: the one-node cluster never reached cluster_state:ok`);
  } finally {
    redis.disconnect();
  }
}

const running = (child: ChildProcess) => child.exitCode === null && child.signalCode === null;

/** Starts a private redis-server; rejects with a clear message if the binary is missing. */
export async function startRedisServer(options: RedisServerOptions = {}): Promise<RedisServer> {
  const port = options.port ?? (await freePort());
  const dir = options.dir ?? mkdtempSync(join(tmpdir(), 'sluice-redis-'));
  let child = await spawnServer(port, dir, options);
  if (strictSlots(options)) await serveEverySlot(port);
  const kill = async (signal: NodeJS.Signals = 'SIGKILL') => {
    if (!running(child)) return;
    const exited = new Promise((r) => child.once('exit', r));
    child.kill(signal);
    if (signal === 'SIGKILL' || signal === 'SIGTERM') await exited;
  };
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    dir,
    get pid() {
      return child.pid;
    },
    async stop() {
      // A frozen server takes no SIGTERM until it runs again.
      if (running(child)) child.kill('SIGCONT');
      await kill('SIGTERM');
      if (options.dir === undefined) rmSync(dir, { recursive: true, force: true });
    },
    kill,
    async restart() {
      if (running(child)) throw new Error('redis-server is still running: kill it before restarting it');
      child = await spawnServer(port, dir, options);
      if (strictSlots(options)) await serveEverySlot(port);
    },
  };
}
