import { Redis, type RedisOptions } from 'ioredis';

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
  /** Reports this connection's failures and its return (see {@link connectRedis}). */
  connection(redis: Redis): Redis;
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

/** What ioredis and BullMQ say when a command met no connection, or Redis is not serving yet. */
const CONNECTION_MESSAGES =
  /Connection is closed|Reached the max retries per request limit|Stream isn't writeable|^LOADING |connect ETIMEDOUT|ECONNREFUSED|ECONNRESET/;

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
  const connections = new Set<Redis>();
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
