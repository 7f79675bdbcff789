import { Cluster, Redis, type ClusterOptions, type RedisOptions } from 'ioredis';
import { redisEndpoints, type RedisConfig, type RedisEndpoint } from '@sluice/core';

/** Where a {@link RedisHealth} writes its lines (pino fits). */
export interface RedisHealthLogger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

/** Options of {@link createRedisHealth}. */
export interface RedisHealthOptions {
  /** The process's Redis URL; its lines show it without the password. */
  url: string;
  logger: RedisHealthLogger;
  /** @defaultValue `Date.now` */
  now?: (() => number) | undefined;
  /**
   * Without an answer by then, {@link RedisHealth.ready} says it waits even though no
   * connection has failed yet (a host that drops packets fails only after `connectTimeout`).
   * @defaultValue `2000`
   */
  waitNoticeMs?: number | undefined;
}

/** Anything that emits `error` events: a BullMQ `Worker`, `Queue`, `QueueEvents`, `FlowProducer`. */
export interface ErrorEmitter {
  on(event: 'error', listener: (err: Error) => void): unknown;
}

/**
 * One process's view of its Redis, fed by every connection and BullMQ object of the process.
 * It logs one line when the process starts waiting for Redis (`redis_waiting`) or loses it
 * (`redis_unavailable`), and one when Redis answers again (`redis_back`, with `downMs`):
 * never one per connection or per retry.
 */
export interface RedisHealth {
  /** Whether a connection of the process is ready (Redis answered). */
  readonly up: boolean;
  /** Reports this connection's failures and its return (see {@link connectRedis}, {@link connectEndpoint}). */
  connection<T extends Redis | Cluster>(redis: T): T;
  /**
   * Takes the `error` events of `emitter`: connection errors are part of the outage this
   * reporter logs once; any other goes to `onOther` (else it is logged as `redis_error`).
   */
  watch<T extends ErrorEmitter>(emitter: T, onOther?: (err: Error) => void): T;
  /**
   * True for a connection error: the outage line covers it, so the caller need not log it
   * (it is counted toward the outage).
   */
  explains(err: unknown): boolean;
  /** Resolves once a connection is ready: at once when one is. */
  ready(): Promise<void>;
  /** Stops reporting: the process is closing its connections, and their errors are expected. */
  close(): void;
}

/** Error codes of a socket that could not reach Redis or lost it. */
const CONNECTION_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'EHOSTDOWN',
  'ENETUNREACH',
  'ENETDOWN',
  'ENOTFOUND',
  'EAI_AGAIN',
]);

/**
 * What ioredis and BullMQ say when a command met no connection, or Redis is not serving yet;
 * and what a cluster client says when no node answers, or the cluster has a slot unserved.
 */
const CONNECTION_MESSAGES =
  /Connection is closed|Reached the max retries per request limit|Stream isn't writeable|^LOADING |connect ETIMEDOUT|ECONNREFUSED|ECONNRESET|Cluster isn't ready|None of startup nodes is available|Failed to refresh slots cache|Too many Cluster redirections|^CLUSTERDOWN /;

/**
 * Whether `err` says Redis could not be reached (refused, reset, timed out, unknown host), a
 * command gave up for want of a connection (`MaxRetriesPerRequestError`, "Connection is
 * closed"), or Redis is still loading its data: what an outage looks like from a process.
 */
export function isRedisConnectionError(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string' && CONNECTION_CODES.has(code)) return true;
  if (err.name === 'MaxRetriesPerRequestError') return true;
  return CONNECTION_MESSAGES.test(err.message);
}

/** A Redis URL as logs show it: the password replaced by `***`. */
export function redisUrlForLogs(url: string): string {
  return url.replace(/\/\/([^@/]*)@/, (_, auth: string) => {
    const colon = auth.indexOf(':');
    return `//${colon >= 0 ? `${auth.slice(0, colon)}:***` : '***'}@`;
  });
}

const message = (err: unknown): string => (err instanceof Error ? err.message : String(err));

/** Creates the Redis health reporter of one process (one per process: it de-duplicates). */
export function createRedisHealth(options: RedisHealthOptions): RedisHealth {
  const { logger } = options;
  const now = options.now ?? Date.now;
  const redis = redisUrlForLogs(options.url);
  const connections = new Set<Redis | Cluster>();
  // starting: no answer yet, nothing said; waiting: said so at start; down: lost after an answer.
  let state: 'starting' | 'waiting' | 'up' | 'down' = 'starting';
  let since = now();
  let closed = false;
  let notice: NodeJS.Timeout | undefined;
  const waiters: (() => void)[] = [];
  const anyReady = (): boolean => [...connections].some((c) => c.status === 'ready');

  function lost(err: unknown): void {
    if (closed) return;
    if (state === 'starting') {
      state = 'waiting';
      const why = err === undefined ? {} : { err: message(err) };
      logger.warn({ event: 'redis_waiting', redis, ...why }, `waiting for Redis at ${redis}`);
    } else if (state === 'up' && !anyReady()) {
      // A stray error while a connection is ready (a command that failed as the last outage
      // ended) is no new outage.
      state = 'down';
      since = now();
      logger.error({ event: 'redis_unavailable', redis, err: message(err) }, `redis unavailable at ${redis}`);
    }
  }

  function found(): void {
    if (notice) clearTimeout(notice);
    notice = undefined;
    if (!closed && (state === 'waiting' || state === 'down')) {
      const downMs = now() - since;
      const atStart = state === 'waiting';
      logger.info(
        { event: 'redis_back', redis, downMs, atStart },
        `redis back at ${redis} after ${(downMs / 1000).toFixed(1)} s`,
      );
    }
    state = 'up';
    for (const resolve of waiters.splice(0)) resolve();
  }

  return {
    get up() {
      return anyReady();
    },
    connection(c) {
      connections.add(c);
      // Every connection error event is about reaching Redis (commands reject on their own).
      c.on('error', lost);
      c.on('ready', found);
      c.on('end', () => connections.delete(c));
      if (c.status === 'ready') found();
      return c;
    },
    watch(emitter, onOther) {
      emitter.on('error', (err) => {
        if (isRedisConnectionError(err)) lost(err);
        else if (onOther) onOther(err);
        else logger.error({ event: 'redis_error', redis, err: message(err) }, 'redis error');
      });
      return emitter;
    },
    explains(err) {
      if (!isRedisConnectionError(err)) return false;
      lost(err);
      return true;
    },
    ready() {
      if (anyReady()) {
        found();
        return Promise.resolve();
      }
      if (state === 'starting' && notice === undefined) {
        notice = setTimeout(() => {
          if (state === 'starting') lost(undefined);
        }, options.waitNoticeMs ?? 2_000);
        notice.unref();
      }
      return new Promise<void>((resolve) => waiters.push(resolve));
    },
    close() {
      closed = true;
      if (notice) clearTimeout(notice);
    },
  };
}

/**
 * How long to wait before the `attempt`th reconnection: 50 ms more each time, at most
 * 500 ms. ioredis's own grows to 2 s, so a fleet found Redis back up to 2 s late after a long
 * outage (measured 2.6 s after a 30 s stop); a connection attempt to a stopped Redis costs
 * next to nothing.
 */
function reconnectDelay(attempt: number): number {
  return Math.min(attempt * 50, 500);
}

/** Options of {@link connectRedis}: ioredis's, and the process's health reporter. */
export interface ConnectRedisOptions extends RedisOptions {
  /** Reports the connection's failures, once per outage. @defaultValue none: failures are left to the commands */
  health?: RedisHealth | undefined;
}

/**
 * Opens an ioredis connection that never prints: ioredis writes each failed attempt of a
 * connection without an `error` listener to stderr as a plain-text stack trace. With a
 * `health`, failures are reported through it; without one (a library's connection) they are
 * left to the commands, which reject.
 */
export function connectRedis(url: string, options: ConnectRedisOptions = {}): Redis {
  const { health, ...redisOptions } = options;
  const redis = new Redis(url, { retryStrategy: reconnectDelay, ...redisOptions });
  if (health) health.connection(redis);
  else redis.on('error', () => undefined);
  return redis;
}

/**
 * What a connection is for, which sets its profile. `worker`: a BullMQ Worker's, whose
 * commands wait for Redis however long it is away (`maxRetriesPerRequest: null`, which BullMQ
 * requires of a Worker's connection). `producer`: a Queue's, the client's, the API's, whose
 * commands fail at once while Redis is unreachable (`enableOfflineQueue: false`) so the caller
 * can answer or retry, instead of piling up in memory.
 */
export type RedisRole = 'worker' | 'producer';

/** Options of {@link connectEndpoint}. */
export interface ConnectEndpointOptions {
  /** Which profile the connection takes (see {@link RedisRole}). */
  role: RedisRole;
  /** Reports the connection's failures, once per outage. @defaultValue none: failures are left to the commands */
  health?: RedisHealth | undefined;
  /** The name every connection gives itself (`CLIENT SETNAME`), on every node of a cluster. @defaultValue none */
  connectionName?: string | undefined;
  /**
   * On a cluster, send concurrent commands in one pipeline per node (`enableAutoPipelining`):
   * fewer round trips for many concurrent small commands. The cost is at a failover: ioredis
   * retries a pipeline only when each of its commands failed alike, and commands of several
   * slots redirected (`MOVED`) to the lost master each fail differently, so they reach the
   * caller as errors instead of waiting for the promoted replica. A worker's commands must
   * outlive a failover (a lost `moveToCompleted` sends a job again), so workers go without.
   * @defaultValue `true` for a producer, `false` for a worker
   */
  autoPipelining?: boolean | undefined;
}

/** How often a producer's command is sent again over a connection that came back. */
const PRODUCER_RETRIES = 2;

/**
 * While a master fails over, a command meets its closed connection or `CLUSTERDOWN`, waits
 * `FAILOVER_RETRY_MS` and tries again, `MAX_REDIRECTIONS` times at most (a `MOVED` counts as
 * one too). A failover takes `cluster-node-timeout` (15 s on ElastiCache) and about a second
 * more; 400 ms × 100 = 40 s, and still 20 s when every retry is paired with a `MOVED` to the
 * lost master, so a command outlives the failover instead of failing with "Too many Cluster
 * redirections". ioredis's defaults (100 ms × 16) give up after 1.6 s.
 */
const FAILOVER_RETRY_MS = 400;
const MAX_REDIRECTIONS = 100;

/** The lookup that returns a host name as it is: TLS on ElastiCache needs the name, which its certificate names. */
const identityLookup: ClusterOptions['dnsLookup'] = (address, callback) => callback(null, address);

/** A seed URL as ioredis's cluster takes it: host and port (the credentials go to every node). */
function seedNode(seed: string): { host: string; port: number } {
  const u = new URL(seed);
  return { host: u.hostname.replace(/^\[(.*)\]$/, '$1'), port: u.port === '' ? 6379 : Number(u.port) };
}

function connectCluster(
  endpoint: Extract<RedisEndpoint, { kind: 'cluster' }>,
  options: ConnectEndpointOptions,
): Cluster {
  const first = new URL(endpoint.seeds[0]!);
  const worker = options.role === 'worker';
  const credentials = {
    ...(first.username === '' ? {} : { username: decodeURIComponent(first.username) }),
    ...(first.password === '' ? {} : { password: decodeURIComponent(first.password) }),
  };
  return new Cluster(endpoint.seeds.map(seedNode), {
    scaleReads: 'master',
    enableAutoPipelining: options.autoPipelining ?? !worker,
    enableOfflineQueue: worker,
    clusterRetryStrategy: reconnectDelay,
    retryDelayOnFailover: FAILOVER_RETRY_MS,
    retryDelayOnClusterDown: FAILOVER_RETRY_MS,
    maxRedirections: MAX_REDIRECTIONS,
    ...(Object.keys(endpoint.natMap).length === 0 ? {} : { natMap: endpoint.natMap }),
    ...(endpoint.resolveHostnames ? {} : { dnsLookup: identityLookup }),
    redisOptions: {
      maxRetriesPerRequest: worker ? null : PRODUCER_RETRIES,
      ...credentials,
      ...(endpoint.tls ? { tls: {} } : {}),
      ...(options.connectionName === undefined ? {} : { connectionName: options.connectionName }),
    },
  });
}

/**
 * Opens the connection of one role to an endpoint (`redisEndpoints(config)`): an ioredis
 * `Redis` for one node, a `Cluster` for a Redis Cluster, with the role's profile (see
 * {@link RedisRole}); reads go to masters only; a cluster's NAT map, TLS and host-name lookup
 * are the endpoint's. Like {@link connectRedis}, it never prints: failures go to `health`, or
 * to the commands.
 */
export function connectEndpoint(endpoint: RedisEndpoint, options: ConnectEndpointOptions): Redis | Cluster {
  const { health, role, connectionName } = options;
  const client =
    endpoint.kind === 'cluster'
      ? connectCluster(endpoint, options)
      : new Redis(endpoint.url, {
          retryStrategy: reconnectDelay,
          ...(role === 'worker'
            ? { maxRetriesPerRequest: null }
            : { enableOfflineQueue: false, maxRetriesPerRequest: PRODUCER_RETRIES }),
          ...(connectionName === undefined ? {} : { connectionName }),
        });
  if (health) health.connection(client);
  else client.on('error', () => undefined);
  return client;
}

/**
 * One process's connections by role (docs/design/state-and-owners.md, Roles): `queues` for
 * BullMQ, the records, campaigns, suppression, outcomes and the fleet (`redis.queues`),
 * `limiter` for the limiter, the signals, the adjustments and the governor's lease and log
 * (`redis.limiter`). When both name the same Redis (the default: `redis.url`), they are one
 * connection.
 */
export interface RoleConnections {
  queues: Redis;
  limiter: Redis;
  /** Whether the limiter has a Redis of its own. */
  readonly separate: boolean;
  /** Closes both (once when they are one). */
  quit(): Promise<void>;
}

/**
 * Opens a process's role connections. A single node gets the connection {@link connectRedis}
 * gives (`maxRetriesPerRequest` as asked); a cluster, {@link connectEndpoint}'s profile
 * (`null` is a worker's, a number a producer's). A `Cluster` is typed as a `Redis` here, the
 * one place it is: it answers the same commands and scripts, and BullMQ takes either.
 */
export function connectRoles(
  config: { redis: RedisConfig },
  options: { maxRetriesPerRequest: number | null; health?: RedisHealth | undefined },
): RoleConnections {
  const endpoints = redisEndpoints(config);
  const open = (endpoint: RedisEndpoint): Redis =>
    endpoint.kind === 'node'
      ? connectRedis(endpoint.url, {
          maxRetriesPerRequest: options.maxRetriesPerRequest,
          health: options.health,
          // The commands of one tick in one write (a block's reads, a batch's marks): on one
          // node a lost connection resends them as it resends any (a cluster's MOVED is the
          // case against it: connectEndpoint).
          enableAutoPipelining: true,
        })
      : (connectEndpoint(endpoint, {
          role: options.maxRetriesPerRequest === null ? 'worker' : 'producer',
          health: options.health,
        }) as unknown as Redis);
  const queues = open(endpoints.queues);
  const separate = JSON.stringify(endpoints.queues) !== JSON.stringify(endpoints.limiter);
  const limiter = separate ? open(endpoints.limiter) : queues;
  return {
    queues,
    limiter,
    separate,
    async quit() {
      await Promise.all([queues.quit(), ...(separate ? [limiter.quit()] : [])]);
    },
  };
}
