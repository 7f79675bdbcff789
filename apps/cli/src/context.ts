import type { Redis } from 'ioredis';
import type { SluiceClient } from '@sluice/client';
import {
  SluiceError,
  createKeys,
  loadConfig,
  redisEndpoints,
  type Keys,
  type RedisEndpoint,
  type SluiceConfig,
} from '@sluice/core';
import type { ArgSpec, OptionSpec, ParsedArgs } from './args.js';

/** Where the CLI writes and what it reads of its process (main.ts passes the real ones). */
export interface Io {
  stdout(text: string): void;
  stderr(text: string): void;
  env: NodeJS.ProcessEnv;
  now(): number;
}

/** What the fleet's modules take: the config, its connections and the key builders. */
export interface Deps {
  config: SluiceConfig;
  /** The queues' Redis (`redis.queues`). */
  redis: Redis;
  /** The limiter's Redis (`redis.limiter`): `redis` itself unless the config names another. */
  control: Redis;
  keys: Keys;
}

/** What a command runs with. Redis is opened only when a command asks for it. */
export interface Context {
  io: Io;
  /** `--json` was given. */
  json: boolean;
  /** Prints a line (or a block) to stdout. */
  print(text: string): void;
  deps(): Promise<Deps>;
  client(): Promise<SluiceClient>;
}

/** One `sluice …` command. */
export interface Command {
  /** The words after `sluice`, e.g. `['override', 'set']`. */
  path: readonly string[];
  /** The usage line after `sluice <path>`, e.g. `<scope> <name> --reason <text>`. */
  usage: string;
  /** One line for the command lists. */
  summary: string;
  /** More lines for `--help`: what it does, examples. */
  description?: readonly string[];
  args: readonly ArgSpec[];
  options: Record<string, OptionSpec>;
  /** Returns the exit code: 0 done, 1 failed (the command says why). */
  run(ctx: Context, parsed: ParsedArgs): Promise<number>;
}

/** Hides a password in a Redis URL before it is printed. */
export function redactUrl(url: string): string {
  return url.replace(
    /\/\/([^@/]*)@/,
    (_, auth: string) => `//${auth.includes(':') ? `${auth.slice(0, auth.indexOf(':'))}:***` : '***'}@`,
  );
}

/**
 * Opens a connection that fails fast: a CLI that waits forever for an unreachable Redis helps
 * nobody. Its failures are reported through the failing command (no connection prints its
 * own). A cluster gets the producer's profile (`connectEndpoint`).
 */
async function connectFast(endpoint: RedisEndpoint): Promise<Redis> {
  const { connectEndpoint, connectRedis } = await import('@sluice/store');
  const where = endpoint.kind === 'node' ? redactUrl(endpoint.url) : endpoint.seeds.map(redactUrl).join(', ');
  const redis =
    endpoint.kind === 'node'
      ? connectRedis(endpoint.url, {
          lazyConnect: true,
          maxRetriesPerRequest: 1,
          retryStrategy: (n) => (n > 2 ? null : 200),
          connectTimeout: 5_000,
        })
      : (connectEndpoint(endpoint, { role: 'producer' }) as unknown as Redis);
  try {
    if (endpoint.kind === 'node') await redis.connect();
    else await redis.ping();
  } catch (cause) {
    redis.disconnect();
    throw new SluiceError(
      'redis_unavailable',
      `cannot connect to Redis at ${where} (REDIS_URL, redis.url, redis.queues or redis.limiter): ${(cause as Error).message}`,
      { cause, action: 'transient' },
    );
  }
  return redis;
}

/** A context whose connections are opened on first use and closed by `close()`. */
export function createContext(io: Io, json: boolean): Context & { close(): Promise<void> } {
  let deps: Promise<Deps> | undefined;
  let client: Promise<SluiceClient> | undefined;

  async function open(): Promise<Deps> {
    const config = loadConfig({ env: io.env });
    const { queues, limiter } = redisEndpoints(config);
    const redis = await connectFast(queues);
    const control = JSON.stringify(queues) === JSON.stringify(limiter) ? redis : await connectFast(limiter);
    return { config, redis, control, keys: createKeys(config.redis.prefix) };
  }

  return {
    io,
    json,
    print: (text) => io.stdout(`${text}\n`),
    deps: () => (deps ??= open()),
    client: () =>
      (client ??= (async () => {
        const d = await (deps ??= open());
        const { createClient } = await import('@sluice/client');
        return createClient({ redis: d.redis, prefix: d.config.redis.prefix });
      })()),
    async close() {
      await (await client?.catch(() => undefined))?.close();
      const d = await deps?.catch(() => undefined);
      if (d) {
        await d.redis.quit().catch(() => d.redis.disconnect());
        if (d.control !== d.redis) await d.control.quit().catch(() => d.control.disconnect());
      }
    },
  };
}
