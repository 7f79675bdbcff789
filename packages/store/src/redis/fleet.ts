import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { Redis } from 'ioredis';
import { SCHEMA_VERSION, SLUICE_VERSION, type Keys } from '@sluice/core';

// The fleet's heartbeat: who is there under a prefix, of which version and schema, and which
// providers of theirs send to the sandbox. The one owner of the `{<prefix>:fleet}` keys.

/** What a process of the fleet does. */
export type FleetRole = 'scheduler' | 'worker' | 'api' | 'admin';

/** One process of the fleet, as its last beat said. */
export interface FleetProcess {
  /** `<role>-<host>-<pid>-<random>`: unique per start. */
  id: string;
  role: FleetRole;
  /** Its Sluice release (`SLUICE_VERSION`). */
  version: string;
  /** The store schema it speaks (`SCHEMA_VERSION`). */
  schema: number;
  host: string;
  pid: number;
  startedAt: number;
  /** Its last beat (epoch ms). */
  beatAt: number;
  /** Its providers that send to the local sandbox (mail that never leaves). */
  sandbox: string[];
  /** A scheduler that admits campaign jobs of many recipients (`block`); absent before 0.3. */
  blocks?: boolean;
}

/** The fleet under a prefix, as its heartbeats tell. */
export interface FleetView {
  /** Processes whose last beat is within `ALIVE_MS`, oldest start first. */
  processes: FleetProcess[];
  /** Live processes per role. */
  alive: Record<FleetRole, number>;
  /** Every schema a live process speaks. */
  schemas: number[];
  /** Providers some live process sends to the sandbox with. */
  sandbox: string[];
  /**
   * Whether campaign jobs may carry many recipients (`block`): some scheduler is alive and
   * every live one takes them (docs/design/batches.md), so a fleet being upgraded gets one
   * job a recipient until its last old scheduler is gone.
   */
  blocks: boolean;
  /** Messages clients accepted while no scheduler ran, since a scheduler last started; null if none. */
  unscheduled: { count: number; firstAt: number; lastAt: number } | null;
}

/** How often a process beats. */
export const BEAT_MS = 5_000;
/** A process is alive while its last beat is this recent (three beats). */
export const ALIVE_MS = 15_000;
/** A beat older than this is dropped from the keys by the next beat of any process. */
const FORGET_MS = 3_600_000;

/** Options of {@link createHeartbeat}. */
export interface HeartbeatOptions {
  redis: Redis;
  keys: Keys;
  role: FleetRole;
  /** Its providers that send to the sandbox. @defaultValue `[]` */
  sandbox?: readonly string[];
  /** A scheduler that takes campaign jobs of many recipients (`batches.enabled`). @defaultValue `false` */
  blocks?: boolean;
  /** @defaultValue `BEAT_MS` */
  intervalMs?: number;
  /** @defaultValue `Date.now` */
  now?: () => number;
  /** The release it announces (a test stands in for another release with it). @defaultValue this build's */
  release?: { version: string; schema: number };
  /** A beat that failed (Redis away): the process's health reporter says so already. @defaultValue ignored */
  onError?: (err: unknown) => void;
}

/** A process's heartbeat: beats from `start()` until `close()`, which says goodbye. */
export interface Heartbeat {
  readonly id: string;
  /** The first beat (awaited), then one every `intervalMs`. */
  start(): Promise<void>;
  /** Stops beating and leaves the fleet at once (a crashed process ages out in `ALIVE_MS`). */
  close(): Promise<void>;
}

/** A process's heartbeat under `keys`. */
export function createHeartbeat(options: HeartbeatOptions): Heartbeat {
  const { redis, keys, role } = options;
  const now = options.now ?? Date.now;
  const id = `${role}-${hostname()}-${process.pid}-${randomBytes(2).toString('hex')}`;
  const startedAt = now();
  const info = (beatAt: number): string =>
    JSON.stringify({
      role,
      version: options.release?.version ?? SLUICE_VERSION,
      schema: options.release?.schema ?? SCHEMA_VERSION,
      host: hostname(),
      pid: process.pid,
      startedAt,
      beatAt,
      sandbox: [...(options.sandbox ?? [])],
      ...(options.blocks ? { blocks: true } : {}),
    } satisfies Omit<FleetProcess, 'id'>);
  let timer: NodeJS.Timeout | undefined;
  let closed = false;

  async function beat(): Promise<void> {
    const at = now();
    const beats = keys.fleetBeats();
    const procs = keys.fleetProcesses();
    const [[, gone]] = (await redis
      .multi()
      .zrangebyscore(beats, '-inf', at - FORGET_MS)
      .zadd(beats, at, id)
      .hset(procs, id, info(at))
      .pexpire(beats, FORGET_MS)
      .pexpire(procs, FORGET_MS)
      .exec()) as [[Error | null, string[]], ...unknown[]];
    // Processes that died long ago: forgotten by whoever beats next.
    if (gone.length > 0) {
      await redis
        .multi()
        .zrem(beats, ...gone)
        .hdel(procs, ...gone)
        .exec();
    }
  }

  const tick = (): void => {
    timer = setTimeout(() => {
      beat()
        .catch((err: unknown) => options.onError?.(err))
        .finally(() => {
          if (!closed) tick();
        });
    }, options.intervalMs ?? BEAT_MS);
    timer.unref();
  };

  return {
    id,
    async start() {
      await beat();
      tick();
    },
    async close() {
      closed = true;
      clearTimeout(timer);
      const leave = redis
        .multi()
        .zrem(keys.fleetBeats(), id)
        .hdel(keys.fleetProcesses(), id)
        .exec()
        .catch((err: unknown) => options.onError?.(err));
      // Redis away: the process ages out of the fleet instead; closing goes on.
      let wait: NodeJS.Timeout | undefined;
      await Promise.race([leave, new Promise((r) => (wait = setTimeout(r, 1_000)))]);
      clearTimeout(wait);
    },
  };
}

const ROLES: readonly FleetRole[] = ['scheduler', 'worker', 'api', 'admin'];

/** The fleet under `keys` as its heartbeats tell, at `at`. */
export async function readFleet(redis: Redis, keys: Keys, at = Date.now()): Promise<FleetView> {
  const [ids, all, unscheduled] = await Promise.all([
    redis.zrangebyscore(keys.fleetBeats(), at - ALIVE_MS, '+inf'),
    redis.hgetall(keys.fleetProcesses()),
    redis.hmget(keys.fleetUnscheduled(), 'count', 'firstAt', 'lastAt'),
  ]);
  const processes = ids
    .flatMap((id) => {
      const json = all[id];
      return json === undefined ? [] : [{ id, ...(JSON.parse(json) as Omit<FleetProcess, 'id'>) }];
    })
    .sort((a, b) => a.startedAt - b.startedAt);
  const alive = Object.fromEntries(ROLES.map((r) => [r, processes.filter((p) => p.role === r).length])) as Record<
    FleetRole,
    number
  >;
  const [count, firstAt, lastAt] = unscheduled.map(Number) as [number, number, number];
  return {
    processes,
    alive,
    schemas: [...new Set(processes.map((p) => p.schema))].sort((a, b) => a - b),
    sandbox: [...new Set(processes.flatMap((p) => p.sandbox))].sort(),
    blocks: alive.scheduler > 0 && processes.every((p) => p.role !== 'scheduler' || p.blocks === true),
    unscheduled: count > 0 ? { count, firstAt, lastAt } : null,
  };
}

/** Counts `n` messages accepted while no scheduler runs. */
export async function noteUnscheduled(redis: Redis, keys: Keys, n: number, at = Date.now()): Promise<void> {
  const key = keys.fleetUnscheduled();
  await redis.multi().hincrby(key, 'count', n).hsetnx(key, 'firstAt', at).hset(key, 'lastAt', at).exec();
}

/**
 * A scheduler starting: takes the count of messages accepted while none ran (it sends them
 * now), so `status` shows only what waits for a scheduler.
 */
export async function takeUnscheduled(redis: Redis, keys: Keys): Promise<FleetView['unscheduled']> {
  const key = keys.fleetUnscheduled();
  const [[, row]] = (await redis.multi().hmget(key, 'count', 'firstAt', 'lastAt').del(key).exec()) as [
    [Error | null, (string | null)[]],
    ...unknown[],
  ];
  const [count, firstAt, lastAt] = row.map(Number) as [number, number, number];
  return count > 0 ? { count, firstAt, lastAt } : null;
}
