import type { Redis } from 'ioredis';
import { SluiceError, type Clock, type Keys } from '@sluice/core';
import { appendAudit } from './audit.js';
import { ENABLED, decodeKey, encodeKey, parseKeyInput, type ApiKeyRecord, type KeyInput } from './codec.js';
import { checkTenantId, readTenant, writeStatus, type StatusChange } from './tenants.js';
import { keyHash, newKeyToken } from './token.js';

/** A rotated key's overlap is at most this long. */
export const MAX_ROTATION_OVERLAP_MS = 7 * 86_400_000;

/** Options of {@link createApiKeys}. */
export interface ApiKeysOptions {
  /** A connection of the caller's to the queues' Redis (`redis.queues`); not closed here. */
  redis: Redis;
  keys: Keys;
  /** `api.keys.pepper`; without it, making a key throws `keys_unconfigured`. */
  pepper: string | undefined;
  /** @defaultValue `Date.now` */
  clock?: Clock;
}

/** A key as made: its token, shown this once, and its record. */
export interface NewApiKey {
  token: string;
  key: ApiKeyRecord;
}

/** Who asks, for the audit trail. */
export interface KeyActor {
  /** @defaultValue `'cli'` */
  actor?: string;
}

/** A tenant's API keys (docs/design/tenants-and-keys.md). */
export interface ApiKeys {
  /** Makes a key; `unknown_tenant` without the tenant's record, `invalid_argument` naming a bad field. */
  create(tenant: string, input: KeyInput & KeyActor): Promise<NewApiKey>;
  /** A tenant's keys, newest first (revoked and expired ones too, marked so). */
  list(tenant: string): Promise<ApiKeyRecord[]>;
  /** One key, or undefined. */
  get(tenant: string, id: string): Promise<ApiKeyRecord | undefined>;
  /**
   * A new key with the old one's settings, in force at once; the old one expires at
   * `oldUntil` (epoch ms, at most {@link MAX_ROTATION_OVERLAP_MS} ahead; now or earlier: at once).
   */
  rotate(tenant: string, id: string, options: { oldUntil: number } & KeyActor): Promise<NewApiKey>;
  /**
   * Sets the owner's or the platform's status of a key (audited): mail sent with it is refused
   * (`key_disabled`) while either is off; it may still read. `unknown_key` for another tenant's.
   */
  setStatus(tenant: string, id: string, change: StatusChange): Promise<ApiKeyRecord>;
  /** Revokes a key at once; revoking a revoked key changes nothing. */
  revoke(tenant: string, id: string, options?: { reason?: string } & KeyActor): Promise<ApiKeyRecord>;
}

/** Reads one key's record and stored hash. */
export async function readKey(
  redis: Redis,
  keys: Keys,
  tenant: string,
  id: string,
): Promise<{ key: ApiKeyRecord; hash: string } | undefined> {
  return decodeKey(id, await redis.hgetall(keys.apiKey(tenant, id)));
}

/** Throws `keys_unconfigured` without a pepper. */
export function needPepper(pepper: string | undefined): string {
  if (pepper === undefined) {
    throw new SluiceError(
      'keys_unconfigured',
      'no API key pepper: set api.keys.pepper or SLUICE_API_KEY_PEPPER (the same on the api and the CLI)',
      { path: 'api.keys.pepper' },
    );
  }
  return pepper;
}

/** The API keys of a fleet's tenants. */
export function createApiKeys(options: ApiKeysOptions): ApiKeys {
  const { redis, keys } = options;
  const clock = options.clock ?? Date.now;

  async function mustHave(tenant: string, id: string): Promise<ApiKeyRecord> {
    checkTenantId(tenant);
    const found = /^[0-9A-Za-z]{12}$/.test(id) ? await readKey(redis, keys, tenant, id) : undefined;
    if (found === undefined) throw new SluiceError('unknown_key', `tenant ${tenant} has no key ${id}`, { path: 'key' });
    return found.key;
  }

  /** Writes a new key: its index entry first (a crash after it leaves an id that finds no key). */
  async function write(
    settings: Omit<ApiKeyRecord, 'id' | 'last4' | 'createdAt' | 'revokedAt' | 'rotatedTo'>,
    actor: string,
    also?: (tx: ReturnType<Redis['multi']>, id: string) => void,
  ): Promise<NewApiKey> {
    const pepper = needPepper(options.pepper);
    const made = newKeyToken(settings.env);
    const now = clock();
    const key: ApiKeyRecord = {
      ...settings,
      id: made.id,
      last4: made.last4,
      createdAt: now,
      revokedAt: undefined,
      rotatedTo: undefined,
    };
    await redis.hset(keys.keyIndex(), made.id, settings.tenant);
    const tx = redis.multi();
    tx.hset(keys.apiKey(settings.tenant, made.id), encodeKey(key, keyHash(pepper, made.token)));
    tx.sadd(keys.tenantKeys(settings.tenant), made.id);
    also?.(tx, made.id);
    const detail = settings.rotatedFrom ? `rotated from ${settings.rotatedFrom}` : `scopes ${key.scopes.join(',')}`;
    appendAudit(tx, keys.tenantAudit(settings.tenant), now, {
      kind: 'key.created',
      actor,
      key: made.id,
      detail,
      source: undefined,
    });
    await tx.exec();
    return { token: made.token, key };
  }

  return {
    async create(tenant, input) {
      checkTenantId(tenant);
      const now = clock();
      const { actor, ...fields } = input;
      const parsed = parseKeyInput(fields, now);
      needPepper(options.pepper);
      if ((await readTenant(redis, keys, tenant)) === undefined) {
        throw new SluiceError(
          'unknown_tenant',
          `no tenant ${tenant}: create it first (sluice tenants create ${tenant})`,
          {
            path: 'tenant',
          },
        );
      }
      const { expiresAt, ...rest } = parsed;
      return write(
        { ...rest, tenant, expiresAt, rotatedFrom: undefined, owner: ENABLED, platform: ENABLED },
        actor ?? 'cli',
      );
    },
    async list(tenant) {
      checkTenantId(tenant);
      const ids = await redis.smembers(keys.tenantKeys(tenant));
      const found = await Promise.all(ids.map((id) => readKey(redis, keys, tenant, id)));
      return found.flatMap((f) => (f ? [f.key] : [])).sort((a, b) => b.createdAt - a.createdAt);
    },
    async get(tenant, id) {
      checkTenantId(tenant);
      return (await readKey(redis, keys, tenant, id))?.key;
    },
    async rotate(tenant, id, opts) {
      const old = await mustHave(tenant, id);
      const now = clock();
      if (old.revokedAt !== undefined) {
        throw new SluiceError('key_revoked', `key ${id} is revoked: make a new key instead`, { path: 'key' });
      }
      if (!(opts.oldUntil <= now + MAX_ROTATION_OVERLAP_MS)) {
        throw new SluiceError('invalid_argument', 'oldUntil: at most 7 days ahead', { path: 'oldUntil' });
      }
      const until = Math.min(Math.max(opts.oldUntil, now), old.expiresAt ?? Infinity);
      const { id: _id, last4: _l, createdAt: _c, revokedAt: _r, rotatedTo: _t, ...settings } = old;
      const actor = opts.actor ?? 'cli';
      return write({ ...settings, rotatedFrom: id }, actor, (tx, newId) => {
        tx.hset(keys.apiKey(tenant, id), 'expiresAt', String(until), 'rotatedTo', newId);
        appendAudit(tx, keys.tenantAudit(tenant), now, {
          kind: 'key.rotated',
          actor,
          key: id,
          detail: `replaced by ${newId}, in force until ${new Date(until).toISOString()}`,
          source: undefined,
        });
      });
    },
    async setStatus(tenant, id, change) {
      await mustHave(tenant, id);
      await writeStatus(redis, keys, { hash: keys.apiKey(tenant, id), tenant, key: id }, change, clock());
      return mustHave(tenant, id);
    },
    async revoke(tenant, id, opts = {}) {
      const key = await mustHave(tenant, id);
      if (key.revokedAt !== undefined) return key;
      const now = clock();
      const tx = redis.multi();
      tx.hset(keys.apiKey(tenant, id), 'revokedAt', String(now));
      appendAudit(tx, keys.tenantAudit(tenant), now, {
        kind: 'key.revoked',
        actor: opts.actor ?? 'cli',
        key: id,
        detail: (opts.reason ?? '').slice(0, 500),
        source: undefined,
      });
      await tx.exec();
      return { ...key, revokedAt: now };
    },
  };
}
