import { createHmac, generateKeyPairSync, randomUUID, sign } from 'node:crypto';
import type { Redis } from 'ioredis';
import { parseConfig, parseMessage, type Keys, type QueuedMessage, type ServiceLogger } from '@sluice/core';
import { afterEach, beforeEach } from 'vitest';
import {
  createApiKeys,
  createStore,
  createSuppressions,
  createTenants,
  messageId,
  type ApiKeys,
  type Store,
  type Suppressions,
} from '@sluice/store';
import { createSignals, type Signals } from '@sluice/throttle';
import type { RedisPrefix } from '../../../test/support/redis-prefix.js';
import { createApi, type Api, type ApiOptions } from '../src/api.js';

export const TOPIC = 'arn:aws:sns:us-east-1:123456789012:ses-events';
export const CERT_URL = 'https://sns.us-east-1.amazonaws.com/SimpleNotificationService-0123456789abcdef.pem';
export const MAILGUN_KEY = 'mailgun-webhook-signing-key-test';

// The same SNS stand-in as the events package's own tests: one signer, not two.
export { createSnsSigner } from '../../../packages/events/test/support/sns-signer.js';

/** SendGrid's side: a P-256 key pair; the public half as the SendGrid UI shows it. */
export function createSendgridSigner(): {
  publicKey: string;
  headers(body: string, timestamp?: number): Record<string, string>;
} {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  return {
    publicKey: publicKey.export({ type: 'spki', format: 'der' }).toString('base64'),
    headers(body, timestamp = Math.floor(Date.now() / 1000)) {
      const signature = sign('sha256', Buffer.from(`${timestamp}${body}`), privateKey).toString('base64');
      return {
        'content-type': 'application/json',
        'x-twilio-email-event-webhook-signature': signature,
        'x-twilio-email-event-webhook-timestamp': String(timestamp),
      };
    },
  };
}

/** Mailgun's `signature` object for a body, signed with `key`. */
export function mailgunSignature(
  key = MAILGUN_KEY,
  timestamp = Math.floor(Date.now() / 1000),
  token = randomUUID().replace(/-/g, ''),
) {
  const ts = String(timestamp);
  return {
    timestamp: ts,
    token,
    signature: createHmac('sha256', key)
      .update(ts + token)
      .digest('hex'),
  };
}

export const quietLogger: ServiceLogger & { lines: string[] } = {
  lines: [],
  info(obj, msg) {
    this.lines.push(JSON.stringify({ ...obj, msg }));
  },
  error(obj, msg) {
    this.lines.push(JSON.stringify({ ...obj, msg }));
  },
  fatal(obj, msg) {
    this.lines.push(JSON.stringify({ ...obj, msg }));
  },
};

/** One test's world: its key prefix (from `useRedisPrefix`), a store, the API over the test's Redis. */
export interface World {
  redis: Redis;
  keys: Keys;
  store: Store;
  suppressions: Suppressions;
  api: Api;
  /** The API's signals; written only when a test flushes them, so snapshots stay still. */
  signals: Signals;
  /** Accepts a message for `to`, so an event can be matched to its record. */
  accepted(to: string, tenantId?: string, extra?: { campaignId?: string; provider?: string }): Promise<QueuedMessage>;
  /** Every key of the prefix with its content: equal snapshots mean nothing was written. */
  snapshot(): Promise<Record<string, unknown>>;
  close(): Promise<void>;
}

/** A world on the test's prefix; `close()` closes what it opened (the helper deletes the keys). */
export async function createWorld(
  test: RedisPrefix,
  config: Record<string, unknown>,
  options: Partial<ApiOptions> = {},
): Promise<World> {
  const { redis, keys, prefix } = test;
  const store = createStore({ redis, keys, recordTtlSeconds: 60 });
  const signals = createSignals({ redis, keys, flushMs: 3_600_000 });
  const api = createApi({
    config: parseConfig({ ...config, redis: { prefix } }),
    logger: quietLogger,
    redis,
    signals,
    ...options,
  });
  await api.server.ready();
  return {
    redis,
    keys,
    store,
    suppressions: createSuppressions({ redis, keys }),
    api,
    signals,
    async accepted(to, tenantId = 'acme', extra = {}) {
      const m = {
        ...parseMessage({ from: 'a@acme.test', to, subject: 's', text: 't', tenantId, campaignId: extra.campaignId }),
        id: messageId(tenantId),
        acceptedAt: Date.now(),
      };
      await store.accept(m);
      // What the worker writes once the provider took it: the record names the provider.
      if (extra.provider !== undefined) await redis.hset(keys.message(m.id), 'provider', extra.provider);
      return m;
    },
    async snapshot() {
      const out: Record<string, unknown> = {};
      for (const key of (await redis.keys(`${prefix}:*`)).sort()) {
        const type = await redis.type(key);
        out[key] =
          type === 'hash'
            ? await redis.hgetall(key)
            : type === 'zset'
              ? await redis.zrangebyscore(key, '-inf', '+inf', 'WITHSCORES')
              : type === 'string'
                ? await redis.get(key)
                : type;
      }
      return out;
    },
    async close() {
      await api.close();
      await signals.close();
    },
  };
}

/** The pepper of the ingest tests' keys. */
export const PEPPER = 'api-pepper/Mn3bV6cX9zL2kJ5hG8fD1sA4qW7eR0t=';

/** An ingest test's api: its world, its listening URL, and a key maker on the test's prefix. */
export interface IngestRig {
  world: World;
  base: string;
  keys: ApiKeys;
}

/**
 * Registers the hooks that start an api with keys on the test's prefix before each test, with
 * `tenants` created, and close it after (`useRedisPrefix` called first in the file).
 */
export function useIngest(test: RedisPrefix, tenants: readonly string[] = ['acme', 'other']): () => IngestRig {
  let rig: IngestRig | undefined;
  beforeEach(async () => {
    const world = await createWorld(test, { api: { port: 0, keys: { pepper: PEPPER } } });
    const base = await world.api.listen();
    for (const t of tenants) await createTenants({ redis: test.redis, keys: test.keys }).create(t);
    rig = { world, base, keys: createApiKeys({ redis: test.redis, keys: test.keys, pepper: PEPPER }) };
  });
  afterEach(async () => {
    await rig?.world.close();
    rig = undefined;
  });
  return () => rig!;
}

/** A valid message body for the ingest routes, with `over` in place. */
export const mail = (over: Record<string, unknown> = {}) => ({
  from: 'Acme <no-reply@acme.test>',
  to: 'jane@example.test',
  subject: 'Your code',
  text: '123456',
  ...over,
});

/** An answer of an ingest route as a test reads it: its status and JSON body (`{}` when empty). */
export interface IngestAnswer {
  status: number;
  headers: Headers;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- each test reads its route's fields
  body: { error?: { code: string; path?: string; message?: string } } & Record<string, any>;
}

/** Calls a route of the rig's api with a key, as a backend's plain `fetch` would. */
export async function callIngest(
  rig: IngestRig,
  method: string,
  path: string,
  token: string,
  body?: unknown,
): Promise<IngestAnswer> {
  const res = await fetch(`${rig.base}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
    },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: (text ? JSON.parse(text) : {}) as IngestAnswer['body'] };
}
