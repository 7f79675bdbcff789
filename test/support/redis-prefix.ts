import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, beforeEach } from 'vitest';
import { createKeys, type Keys } from '@sluice/core';
import { startRedisServer, type RedisServer } from './redis-server.js';

/** What {@link useRedisPrefix} gives a test file: read it inside hooks and tests only. */
export interface RedisPrefix {
  /**
   * The file's own Redis: a private redis-server, or, when REDIS_URL names a Redis, a database
   * of its own there (`redis://host:port/<db>`). Give it to everything the test starts.
   */
  readonly url: string;
  /** The helper's connection (not counted as open); tests may use it, never close it. */
  readonly redis: Redis;
  /** This test's key prefix, new for every test; its keys are deleted after the test. */
  readonly prefix: string;
  /** `createKeys(prefix)`. */
  readonly keys: Keys;
}

/** A client as `CLIENT LIST` shows it. */
export interface RedisClientInfo {
  id: string;
  name: string;
  cmd: string;
  db: string;
  addr: string;
  age: string;
}

/** Options of {@link useRedisPrefix}. */
export interface RedisPrefixOptions {
  /**
   * How long a closed client may take to leave the server's list.
   * @defaultValue 2000
   */
  closeWaitMs?: number;
}

/** The clients connected to the Redis of `redis` (on its database only, when `db` is given). */
export async function listClients(redis: Redis, db?: number): Promise<RedisClientInfo[]> {
  const text = (await redis.client('LIST')) as string;
  const clients = text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => {
      const fields = new Map(
        line
          .trim()
          .split(' ')
          .map((pair): [string, string] => {
            const at = pair.indexOf('=');
            return [pair.slice(0, at), pair.slice(at + 1)];
          }),
      );
      const field = (k: string): string => fields.get(k) ?? '';
      return {
        id: field('id'),
        name: field('name'),
        cmd: field('cmd'),
        db: field('db'),
        addr: field('addr'),
        age: field('age'),
      };
    });
  return db === undefined ? clients : clients.filter((c) => c.db === String(db));
}

/**
 * Waits up to `waitMs` for every client not in `allowed` to disconnect; resolves those still
 * connected then (none when all closed).
 */
export async function clientsLeftOpen(
  redis: Redis,
  allowed: ReadonlySet<string>,
  waitMs: number,
  db?: number,
): Promise<RedisClientInfo[]> {
  const deadline = Date.now() + waitMs;
  for (;;) {
    const open = (await listClients(redis, db)).filter((c) => !allowed.has(c.id));
    if (open.length === 0 || Date.now() >= deadline) return open;
    // Redis has no event for another client's disconnect: poll the list.
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** One line per client, as a failing test names them. */
export function describeClients(clients: readonly RedisClientInfo[]): string {
  return clients
    .map((c) => `  id=${c.id} name=${c.name || '(none)'}${bullName(c.name)} cmd=${c.cmd} age=${c.age}s`)
    .join('\n');
}

/** A BullMQ worker names its blocking connection `<prefix>:<base64 of the queue name>`. */
function bullName(name: string): string {
  const match = /^[^:]+:([A-Za-z0-9+/]+=*)$/.exec(name);
  if (!match?.[1]) return '';
  const queue = Buffer.from(match[1], 'base64').toString('utf8');
  return /^[\x20-\x7e]+$/.test(queue) ? ` (a BullMQ Worker of queue '${queue}')` : '';
}

/** The database index to use on a shared REDIS_URL: one per file, round robin, never 0. */
async function databaseOf(url: string): Promise<number> {
  const shared = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1 });
  try {
    await shared.connect();
    const configured = await shared.config('GET', 'databases').catch(() => []);
    const count = Number((configured as string[])[1] ?? 16) || 16;
    const n = await shared.incr('sluice-test:next-db');
    return 1 + (n % (count - 1));
  } finally {
    shared.disconnect();
  }
}

/** The file's Redis: its own server, or a database of its own on REDIS_URL. */
async function fileRedis(): Promise<{ url: string; db?: number; server?: RedisServer }> {
  const shared = process.env.REDIS_URL;
  if (!shared) {
    const server = await startRedisServer();
    return { url: server.url, server };
  }
  const db = await databaseOf(shared);
  const url = new URL(shared);
  url.pathname = `/${db}`;
  return { url: url.toString(), db };
}

/**
 * Gives each test of the file a fresh key prefix on a Redis the file does not share, deletes the
 * prefix's keys after each test, and fails a test that leaves a connection open: a client still
 * connected after the test (and its `afterEach` hooks) that was not there when it began — an
 * ioredis, a BullMQ Queue's or Worker's connection, whether the test or the product code opened
 * it. Clients opened in `beforeAll` must be closed by the file's `afterAll`, checked after it.
 * A reported client is not reported again. Call it first in the file (or describe), before hooks
 * that read it; the file's tests run one at a time (no `it.concurrent`). A BullMQ `Queue` on a
 * connection passed in opens no socket of its own, so leaving one open is not seen (a `Worker`
 * always opens one).
 */
export function useRedisPrefix(options: RedisPrefixOptions = {}): RedisPrefix {
  const closeWaitMs = options.closeWaitMs ?? 2_000;
  let file: { url: string; db?: number; server?: RedisServer; redis: Redis; own: string } | undefined;
  let test: { prefix: string; keys: Keys; allowed: Set<string> } | undefined;
  const reported = new Set<string>();

  beforeAll(async () => {
    const where = await fileRedis();
    const redis = new Redis(where.url, { connectionName: 'sluice-test-helper' });
    const own = String(await redis.client('ID'));
    file = { ...where, redis, own };
  });
  beforeEach(async () => {
    const { redis, db } = ready();
    const prefix = `t${randomUUID().slice(0, 8)}`;
    const allowed = new Set((await listClients(redis, db)).map((c) => c.id));
    test = { prefix, keys: createKeys(prefix), allowed };
  });
  afterEach(async () => {
    const { redis, db } = ready();
    const current = test;
    test = undefined;
    if (!current) return;
    const open = await clientsLeftOpen(redis, new Set([...current.allowed, ...reported]), closeWaitMs, db);
    await deletePrefix(redis, current.prefix);
    for (const c of open) reported.add(c.id);
    if (open.length)
      throw new Error(`the test left ${open.length} Redis connection(s) open:\n${describeClients(open)}`);
  });
  afterAll(async () => {
    if (!file) return;
    const { redis, db, server, own } = file;
    file = undefined;
    try {
      const open = await clientsLeftOpen(redis, new Set([own, ...reported]), closeWaitMs, db);
      if (open.length)
        throw new Error(`the file left ${open.length} Redis connection(s) open:\n${describeClients(open)}`);
    } finally {
      await redis.quit();
      await server?.stop();
    }
  });

  function ready(): NonNullable<typeof file> {
    if (!file) throw new Error('useRedisPrefix: read it inside hooks and tests, after its beforeAll');
    return file;
  }
  function current(): NonNullable<typeof test> {
    if (!test) throw new Error('useRedisPrefix: the prefix exists inside a test and its beforeEach/afterEach only');
    return test;
  }
  return {
    get url() {
      return ready().url;
    },
    get redis() {
      return ready().redis;
    },
    get prefix() {
      return current().prefix;
    },
    get keys() {
      return current().keys;
    },
  };
}

/** Deletes every key naming `prefix` (Sluice's keys, its `{prefix:rl}` limiter keys, its queues). */
async function deletePrefix(redis: Redis, prefix: string): Promise<void> {
  let cursor = '0';
  do {
    const [next, found] = await redis.scan(cursor, 'MATCH', `*${prefix}*`, 'COUNT', 1000);
    cursor = next;
    // One key a command: on a cluster, keys of different slots go in no one command.
    if (found.length) await Promise.all(found.map((key) => redis.unlink(key)));
  } while (cursor !== '0');
}
