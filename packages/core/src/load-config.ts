import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { z } from 'zod';
import { redisUrl, url } from './config-fields.js';
import { endpointSchema } from './config-redis.js';
import { RESERVED_KEYS, readConfigText } from './config-input.js';
import { logLevel, tokenWeakness } from './config-surfaces.js';
import { parseConfig, type SluiceConfig } from './config.js';
import { SluiceError } from './errors.js';
import { MAX_DISPATCH_PARTITIONS } from './keys.js';

/** Options of {@link loadConfig}. */
export interface LoadConfigOptions {
  /** The environment to read. @defaultValue `process.env` */
  env?: NodeJS.ProcessEnv;
  /** Overrides `SLUICE_CONFIG`. */
  path?: string;
}

/** Where the config file is looked for when `SLUICE_CONFIG` is not set. */
export const DEFAULT_CONFIG_PATH = 'sluice.yaml';

/**
 * Loads the config once at start: the YAML file named by `SLUICE_CONFIG` (else
 * `./sluice.yaml` if it exists, else the built-in defaults), then the environment:
 * `REDIS_URL` overrides `redis.url`, `SLUICE_REDIS_QUEUES` and `SLUICE_REDIS_LIMITER` (a URL, or
 * `cluster:` and seed URLs) `redis.queues` and `redis.limiter`, `SLUICE_DISPATCH_PARTITIONS`
 * `redis.dispatchPartitions`; `REDIS_PASSWORD` (and `REDIS_USERNAME`) fill in the
 * credentials of every Redis URL and cluster seed that has none; `AWS_REGION` fills in SES providers' region;
 * `SENDGRID_API_KEY`, `MAILGUN_API_KEY` and `SMTP_PASSWORD` fill in real providers of their
 * kinds that have none (an SES provider without static keys takes the AWS default credential
 * chain, which reads `AWS_*` itself, the one exception to the rule below); `SLUICE_SANDBOX_URL` and `SLUICE_SANDBOX_SMTP`
 * (`host:port`) move the sandbox; `SENDGRID_WEBHOOK_PUBLIC_KEY` and `MAILGUN_WEBHOOK_SIGNING_KEY`
 * fill in the webhook keys (`api.webhooks`) when the file has none, `SLUICE_API_KEY_PEPPER` the
 * API keys' pepper (`api.keys.pepper`); `LOG_LEVEL` sets
 * `logging.level`.
 * This is the only place that reads `process.env`.
 */
export function loadConfig(options: LoadConfigOptions = {}): SluiceConfig {
  const env = options.env ?? process.env;
  const explicit = options.path ?? env.SLUICE_CONFIG;
  const path = resolve(explicit ?? DEFAULT_CONFIG_PATH);
  let raw: unknown = {};
  if (explicit !== undefined || existsSync(path)) {
    let text: string;
    try {
      text = readFileSync(path, 'utf8');
    } catch (cause) {
      throw new SluiceError(
        'invalid_config',
        `cannot read config file ${path} (SLUICE_CONFIG): ${(cause as Error).message}`,
        { cause },
      );
    }
    raw = readConfigText(text, `config file ${path}`) ?? {};
  }
  const config = parseConfig(
    raw,
    `config ${explicit === undefined && !existsSync(path) ? '(built-in defaults)' : path}`,
  );
  if (env.REDIS_URL) config.redis.url = fromEnv(env, 'REDIS_URL', redisUrl, 'redis.url');
  redisFromEnv(config, env);
  if (env.SLUICE_SANDBOX_URL) config.sandbox.url = fromEnv(env, 'SLUICE_SANDBOX_URL', url, 'sandbox.url');
  if (env.SLUICE_SANDBOX_SMTP) {
    const m = /^([A-Za-z0-9._-]+):(\d{1,5})$/.exec(env.SLUICE_SANDBOX_SMTP);
    if (!m || Number(m[2]) < 1 || Number(m[2]) > 65535) {
      throw new SluiceError(
        'invalid_config',
        `SLUICE_SANDBOX_SMTP must be host:port, got ${JSON.stringify(env.SLUICE_SANDBOX_SMTP)}`,
        { path: 'sandbox.smtpPort' },
      );
    }
    config.sandbox.smtpHost = m[1]!;
    config.sandbox.smtpPort = Number(m[2]);
  }
  if (env.LOG_LEVEL) {
    const level = logLevel.safeParse(env.LOG_LEVEL);
    if (!level.success) {
      throw new SluiceError(
        'invalid_config',
        `LOG_LEVEL (logging.level) must be one of ${logLevel.options.join(', ')}, got ${JSON.stringify(env.LOG_LEVEL)}`,
        { path: 'logging.level', cause: level.error },
      );
    }
    config.logging.level = level.data;
  }
  const metricsPort = portOf(env, 'SLUICE_METRICS_PORT', 'metrics.port');
  if (metricsPort !== undefined) config.metrics.port = metricsPort;
  const healthPort = portOf(env, 'SLUICE_HEALTH_PORT', 'health.port');
  if (healthPort !== undefined) config.health.port = healthPort;
  const adminPort = portOf(env, 'SLUICE_ADMIN_PORT', 'admin.port');
  if (adminPort !== undefined) config.admin.port = adminPort;
  if (env.SLUICE_ADMIN_TOKENS) {
    // actor:token,actor:token — the token is everything after the first colon.
    const tokens = env.SLUICE_ADMIN_TOKENS.split(',').map((pair, i) => {
      const at = pair.indexOf(':');
      const actor = pair.slice(0, at).trim();
      const token = pair.slice(at + 1).trim();
      if (at < 1 || !/^[A-Za-z0-9_-]{1,64}$/.test(actor) || RESERVED_KEYS.has(actor)) {
        throw new SluiceError(
          'invalid_config',
          `SLUICE_ADMIN_TOKENS: pair ${i + 1} must be actor:token (the actor [A-Za-z0-9_-]{1,64}), pairs separated by commas`,
          { path: 'admin.tokens' },
        );
      }
      // Never the token itself in the message: the actor and the rule it breaks.
      const weakness = tokenWeakness(token);
      if (weakness !== undefined) {
        throw new SluiceError('invalid_config', `SLUICE_ADMIN_TOKENS: the token of ${actor} ${weakness}`, {
          path: 'admin.tokens',
        });
      }
      return { actor, token };
    });
    config.admin.tokens.push(...tokens);
  }
  const pepper = config.api.keys.pepper ?? (env.SLUICE_API_KEY_PEPPER || undefined);
  const pepperWeakness = pepper === undefined ? undefined : tokenWeakness(pepper);
  if (pepperWeakness !== undefined) {
    throw new SluiceError('invalid_config', `SLUICE_API_KEY_PEPPER ${pepperWeakness}`, { path: 'api.keys.pepper' });
  }
  if (pepper !== undefined) config.api.keys.pepper = pepper;
  const hooks = config.api.webhooks;
  hooks.sendgrid.publicKey ??= env.SENDGRID_WEBHOOK_PUBLIC_KEY || undefined;
  hooks.mailgun.signingKey ??= env.MAILGUN_WEBHOOK_SIGNING_KEY || undefined;
  for (const provider of Object.values(config.providers)) {
    if (provider.sandbox) continue;
    if (provider.kind === 'sendgrid') provider.apiKey ??= env.SENDGRID_API_KEY || undefined;
    if (provider.kind === 'mailgun') provider.apiKey ??= env.MAILGUN_API_KEY || undefined;
    if (provider.kind === 'smtp') provider.password ??= env.SMTP_PASSWORD || undefined;
    if (provider.kind === 'ses' && env.AWS_REGION && provider.region === 'us-east-1') provider.region = env.AWS_REGION;
  }
  return config;
}

/** The environment variable `name` (standing for `path`), checked as the file's field is. */
function fromEnv(env: NodeJS.ProcessEnv, name: string, schema: z.ZodType<string>, path: string): string {
  const result = schema.safeParse(env[name]);
  if (result.success) return result.data;
  throw new SluiceError('invalid_config', `${name} (${path}): ${result.error.issues[0]?.message ?? 'invalid'}`, {
    path,
    cause: result.error,
  });
}

/**
 * A Redis role's endpoint from the environment variable `name`: a Redis URL (one node), or
 * `cluster:` and the seed URLs, comma-separated (a Redis Cluster; `natMap` stays the file's).
 */
function endpointFromEnv(
  env: NodeJS.ProcessEnv,
  name: string,
  path: string,
): NonNullable<SluiceConfig['redis']['queues']> {
  const value = env[name]!.trim();
  const input = value.startsWith('cluster:')
    ? {
        cluster: value
          .slice('cluster:'.length)
          .split(',')
          .map((s) => s.trim()),
      }
    : value;
  const result = endpointSchema.safeParse(input);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const at = issue?.path.length ? ` (${issue.path.join('.')})` : '';
  throw new SluiceError(
    'invalid_config',
    `${name} (${path}) must be a Redis URL, or cluster: and seed URLs separated by commas${at}: ${issue?.message ?? 'invalid'}`,
    { path, cause: result.error },
  );
}

/** A port number from the environment variable `name` (standing for `path`), if it is set. */
function portOf(env: NodeJS.ProcessEnv, name: string, path: string): number | undefined {
  const value = env[name];
  if (!value) return undefined;
  const port = Number(value);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new SluiceError('invalid_config', `${name} must be a port number, got ${JSON.stringify(value)}`, { path });
  }
  return port;
}

/**
 * The Redis roles, partitions and password from the environment (`SLUICE_REDIS_QUEUES`,
 * `SLUICE_REDIS_LIMITER`, `SLUICE_DISPATCH_PARTITIONS`, `REDIS_PASSWORD`, `REDIS_USERNAME`),
 * over what the file said.
 */
function redisFromEnv(config: SluiceConfig, env: NodeJS.ProcessEnv): void {
  for (const [role, name] of [
    ['queues', 'SLUICE_REDIS_QUEUES'],
    ['limiter', 'SLUICE_REDIS_LIMITER'],
  ] as const) {
    if (env[name]) config.redis[role] = endpointFromEnv(env, name, `redis.${role}`);
  }
  const partitions = env.SLUICE_DISPATCH_PARTITIONS;
  if (partitions) {
    const n = Number(partitions);
    if (!Number.isInteger(n) || n < 1 || n > MAX_DISPATCH_PARTITIONS) {
      throw new SluiceError(
        'invalid_config',
        `SLUICE_DISPATCH_PARTITIONS (redis.dispatchPartitions) must be a whole number from 1 to ${MAX_DISPATCH_PARTITIONS}, got ${JSON.stringify(partitions)}`,
        { path: 'redis.dispatchPartitions' },
      );
    }
    config.redis.dispatchPartitions = n;
  }
  if (env.REDIS_PASSWORD) withRedisPassword(config, env.REDIS_PASSWORD, env.REDIS_USERNAME || undefined);
}

/**
 * Fills in `password` (and `username`) on every Redis URL of the config that has no password:
 * `redis.url`, `redis.queues` and `redis.limiter`, URLs or cluster seeds. So the endpoints can
 * live in a config file or ConfigMap while the password comes from a secret's environment.
 */
function withRedisPassword(config: SluiceConfig, password: string, username: string | undefined): void {
  const fill = (value: string): string => {
    // A socket path has no credentials to fill in.
    if (!/^rediss?:\/\//.test(value)) return value;
    const u = new URL(value);
    if (u.password !== '') return value;
    u.password = encodeURIComponent(password);
    if (username !== undefined && u.username === '') u.username = encodeURIComponent(username);
    return u.toString();
  };
  const r = config.redis;
  r.url = fill(r.url);
  for (const role of ['queues', 'limiter'] as const) {
    const endpoint = r[role];
    if (typeof endpoint === 'string') r[role] = fill(endpoint);
    else if (endpoint !== undefined) endpoint.cluster = endpoint.cluster.map(fill);
  }
}
