import { createHash, randomUUID } from 'node:crypto';
import type { Logger, pino as Pino } from 'pino';
import type { SluiceConfig } from './config.js';
import { lazy } from './lazy.js';
import { loadConfig } from './load-config.js';

const pino = lazy<{ pino: typeof Pino }>('pino');

/**
 * The fields that hold credentials, wherever they sit in a log object: the config's own
 * (`providers.*.apiKey`, `password`, `accessKeyId`, `secretAccessKey`, `api.webhooks.*` keys,
 * `admin.tokens`), an SDK's (`sessionToken`, nodemailer's `auth.pass`) and HTTP headers
 * (`authorization`, also inside an error's request config).
 */
const SECRET_FIELDS = [
  'apiKey',
  'password',
  'pass',
  'accessKeyId',
  'secretAccessKey',
  'sessionToken',
  'signingKey',
  'pepper',
  'publicKey',
  'token',
  'tokens',
  'authorization',
  'Authorization',
  'cookie',
];

/** How deep a credential is looked for: `config.providers.<id>.apiKey` is 3 levels down. */
const SECRET_DEPTH = 5;

/** Fields whose value is a recipient address. */
const RECIPIENT_FIELDS = new Set(['to', 'address', 'recipient', 'email', 'recipients']);

/** How deep recipient fields are looked for in a log object. */
const RECIPIENT_DEPTH = 4;

const EMAIL = /^[^\s@]+@[^\s@]+$/;

/** What a credential is replaced with in a log line. */
export const REDACTED = '[redacted]';

/**
 * A recipient address as logs show it: `h:` and the first 12 hex digits of the SHA-256 of
 * the lower-cased address. The same address always gives the same hash, so one recipient's
 * lines can be found (hash the address you look for) without the log holding the address.
 */
export function hashRecipient(address: string): string {
  return `h:${createHash('sha256').update(address.trim().toLowerCase()).digest('hex').slice(0, 12)}`;
}

/** The pino options {@link loggerOptions} returns (a structural subset of pino's `LoggerOptions`). */
export interface SluiceLoggerOptions {
  name: string;
  level: string;
  redact: { paths: string[]; censor: string };
  serializers: Record<string, (value: unknown) => unknown>;
  formatters: { log(object: Record<string, unknown>): Record<string, unknown> };
}

/**
 * pino options for a Sluice process: `pino(loggerOptions('sluice-worker', config))`.
 * Credentials are always replaced by `[redacted]`; recipient addresses (in fields `to`,
 * `address`, `recipient`, `email`, `recipients`, up to 4 levels down) become
 * {@link hashRecipient} hashes unless `logging.recipients` is `plain`. Values of those fields
 * that are not addresses (say a listen address) are left alone. Lines below
 * `logging.level` are not written.
 * @param config - without it (before the config is read), addresses are hashed and the level is `info`.
 */
export function loggerOptions(name: string, config?: Pick<SluiceConfig, 'logging'>): SluiceLoggerOptions {
  const plain = config?.logging.recipients === 'plain';
  const paths: string[] = [];
  for (let depth = 0; depth < SECRET_DEPTH; depth++) {
    for (const field of SECRET_FIELDS) paths.push(`${'*.'.repeat(depth)}${field}`);
  }
  const serializers: Record<string, (value: unknown) => unknown> = {};
  if (!plain) {
    // Top-level fields and child bindings (formatters.log does not see bindings).
    for (const field of RECIPIENT_FIELDS) serializers[field] = (value) => hashValue(value);
  }
  return {
    name,
    level: config?.logging.level ?? 'info',
    redact: { paths, censor: REDACTED },
    serializers,
    formatters: { log: plain ? (object) => object : (object) => hashNested(object, RECIPIENT_DEPTH) },
  };
}

function hashValue(value: unknown): unknown {
  if (typeof value === 'string') return EMAIL.test(value.trim()) ? hashRecipient(value) : value;
  if (Array.isArray(value)) return value.map(hashValue);
  return value;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object') return false;
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null;
}

/** Copies only what it changes; errors and other class instances are left to their serializers. */
function hashNested<T>(value: T, depth: number): T {
  if (depth < 0) return value;
  if (Array.isArray(value)) {
    let out: unknown[] | undefined;
    value.forEach((item: unknown, i) => {
      const next = hashNested(item, depth - 1);
      if (next !== item) (out ??= [...value])[i] = next;
    });
    return (out ?? value) as T;
  }
  if (!isPlainObject(value)) return value;
  let out: Record<string, unknown> | undefined;
  for (const [key, item] of Object.entries(value)) {
    const next = RECIPIENT_FIELDS.has(key) ? hashValue(item) : hashNested(item, depth - 1);
    if (next !== item) (out ??= { ...value })[key] = next;
  }
  return (out ?? value) as T;
}

/**
 * A process's config and logger, made in that order: the config says how addresses are
 * logged. A config that cannot be read comes back as the error, for the start to throw (it
 * is then logged with the defaults: credentials redacted, addresses hashed).
 */
export function configAndLogger(name: string): { config: SluiceConfig | Error; logger: Logger } {
  let config: SluiceConfig | Error;
  try {
    config = loadConfig();
  } catch (err) {
    config = err instanceof Error ? err : new Error(String(err));
  }
  return { config, logger: pino().pino(loggerOptions(name, config instanceof Error ? undefined : config)) };
}

/** What an incoming `x-request-id` may be to be kept (else a new id is made): no spaces, quotes or controls. */
const REQUEST_ID = /^[A-Za-z0-9._:@/+=-]{1,128}$/;

/**
 * The id of an HTTP request: the caller's `x-request-id` when it is a plain token of at most
 * 128 characters, else a new random one. The apps log it with every line of the request
 * (`reqId`) and answer it back in `x-request-id`.
 */
export function requestIdOf(header: unknown): string {
  return typeof header === 'string' && REQUEST_ID.test(header) ? header : randomUUID();
}

/**
 * A request as its log line shows it: method, path (never the query string, which could
 * carry a credential) and the peer. Headers are left out: they carry the credentials.
 */
export function requestSummary(req: { method: string; url: string; ip?: string }): Record<string, unknown> {
  return { method: req.method, path: req.url.split('?')[0], remoteAddress: req.ip };
}
