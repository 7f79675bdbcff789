import { BlockList, isIPv4, isIPv6 } from 'node:net';
import type { Redis } from 'ioredis';
import { SluiceError, type Clock, type Keys, type SluiceErrorCode } from '@sluice/core';
import { createFailureLog } from './audit.js';
import { decodeKey, decodeTenant, type ApiKeyRecord, type KeyScope, type TenantRecord } from './codec.js';
import { needPepper } from './keys.js';
import { tenantStopped } from './tenants.js';
import { keyMatches, parseKeyToken } from './token.js';

/** A request's key, checked: the key's record and its tenant's. */
export interface Authenticated {
  key: ApiKeyRecord;
  tenant: TenantRecord;
  /** The address the request came from, as it was checked. */
  source: string | undefined;
}

/** Options of {@link createAuthenticator}. */
export interface AuthenticatorOptions {
  /** A connection of the caller's to the queues' Redis; not closed here. */
  redis: Redis;
  keys: Keys;
  pepper: string | undefined;
  /** @defaultValue `Date.now` */
  clock?: Clock;
}

/** Checks keys: every check reads the key's record, so a revocation is in force at the next request. */
export interface Authenticator {
  /**
   * The key's record and tenant, or a `SluiceError` of a `key_*` code (written to the audit
   * trail: the tenant's when the key's id is known, else the fleet's).
   */
  authenticate(token: string | undefined, source: string | undefined): Promise<Authenticated>;
  /** Writes a refusal after authentication (out of scope, tenant off) to the tenant's audit trail. */
  refused(auth: Authenticated, code: SluiceErrorCode): Promise<void>;
}

/** Whether `address` is within one of `cidrs` (each an address or a block). */
export function sourceAllowed(cidrs: readonly string[], address: string | undefined): boolean {
  if (cidrs.length === 0) return true;
  if (address === undefined) return false;
  // An IPv4 client on a dual-stack socket is `::ffff:a.b.c.d`.
  const plain = address.startsWith('::ffff:') && isIPv4(address.slice(7)) ? address.slice(7) : address;
  const family = isIPv4(plain) ? 'ipv4' : isIPv6(plain) ? 'ipv6' : undefined;
  if (family === undefined) return false;
  const list = new BlockList();
  for (const c of cidrs) {
    const [net, bits] = c.split('/');
    const f = isIPv4(net!) ? 'ipv4' : 'ipv6';
    if (bits === undefined) list.addAddress(net!, f);
    else list.addSubnet(net!, Number(bits), f);
  }
  return list.check(plain, family);
}

/** Throws `key_scope` unless the key holds `scope` (or `admin`). */
export function requireScope(auth: Authenticated, scope: KeyScope): void {
  if (!auth.key.scopes.includes(scope) && !auth.key.scopes.includes('admin')) {
    throw new SluiceError('key_scope', `key ${auth.key.id} lacks the scope ${scope}`, { path: 'scope' });
  }
}

/**
 * Throws `tenant_disabled` while either party has the key's tenant off, and `key_disabled` while
 * either has the key itself off.
 */
export function requireSending(auth: Authenticated): void {
  const why = tenantStopped(auth.tenant);
  if (why !== undefined) {
    throw new SluiceError('tenant_disabled', `tenant ${auth.tenant.id} does not send: ${why}`, { path: 'tenant' });
  }
  const keyWhy = tenantStopped(auth.key);
  if (keyWhy !== undefined) {
    throw new SluiceError('key_disabled', `key ${auth.key.id} does not send: ${keyWhy}`, { path: 'key' });
  }
}

/**
 * Throws `key_scope` naming the field when a message is outside what the key may send: its
 * `stream` (default `transactional`) among the key's streams, its `from` at one of its domains.
 */
export function requireMessageAllowed(
  key: ApiKeyRecord,
  message: { stream?: string | undefined; from: string },
  path: string,
): void {
  const field = (name: string): string => (path ? `${path}.${name}` : name);
  const stream = message.stream ?? 'transactional';
  if (key.streams.length > 0 && !key.streams.includes(stream)) {
    throw new SluiceError('key_scope', `${field('stream')}: key ${key.id} may send only ${key.streams.join(', ')}`, {
      path: field('stream'),
    });
  }
  if (key.fromDomains.length > 0) {
    const at = /@([^@>\s]+)>?\s*$/.exec(message.from)?.[1]?.toLowerCase();
    if (at === undefined || !key.fromDomains.includes(at)) {
      throw new SluiceError(
        'key_scope',
        `${field('from')}: key ${key.id} may send only from ${key.fromDomains.join(', ')}`,
        {
          path: field('from'),
        },
      );
    }
  }
}

/** The key checks of one process (the id → tenant index, which never changes, is kept). */
export function createAuthenticator(options: AuthenticatorOptions): Authenticator {
  const { redis, keys } = options;
  const clock = options.clock ?? Date.now;
  const tenantOf = new Map<string, string>();
  const failed = createFailureLog(redis, keys, clock);

  async function refuse(
    code: SluiceErrorCode,
    message: string,
    tenant: string | undefined,
    key: string | undefined,
    source: string | undefined,
  ): Promise<never> {
    await failed(tenant, { detail: code, key, source });
    throw new SluiceError(code, message);
  }

  return {
    async authenticate(token, source) {
      const pepper = needPepper(options.pepper);
      if (token === undefined || token === '') {
        throw new SluiceError('key_missing', 'no key: send Authorization: Bearer <key>');
      }
      const parsed = parseKeyToken(token);
      if (typeof parsed === 'string') {
        const why = parsed === 'checksum' ? 'its checksum is wrong (mistyped or cut short?)' : 'not a Sluice key';
        return refuse('key_malformed', `the key is malformed: ${why}`, undefined, undefined, source);
      }
      let tenant = tenantOf.get(parsed.id);
      if (tenant === undefined) {
        tenant = (await redis.hget(keys.keyIndex(), parsed.id)) ?? undefined;
        if (tenant !== undefined) tenantOf.set(parsed.id, tenant);
      }
      if (tenant === undefined) return refuse('key_invalid', 'the key is not valid', undefined, parsed.id, source);
      const [keyFields, tenantFields] = (await redis
        .multi()
        .hgetall(keys.apiKey(tenant, parsed.id))
        .hgetall(keys.tenant(tenant))
        .exec()
        .then((r) => (r ?? []).map(([, v]) => v))) as [Record<string, string>, Record<string, string>];
      const found = decodeKey(parsed.id, keyFields);
      const tenantRecord = decodeTenant(tenant, tenantFields);
      if (found === undefined || tenantRecord === undefined || !keyMatches(pepper, token, found.hash)) {
        return refuse('key_invalid', 'the key is not valid', tenant, parsed.id, source);
      }
      const { key } = found;
      if (key.revokedAt !== undefined) return refuse('key_revoked', `key ${key.id} is revoked`, tenant, key.id, source);
      if (key.expiresAt !== undefined && key.expiresAt <= clock()) {
        const at = new Date(key.expiresAt).toISOString();
        return refuse('key_expired', `key ${key.id} expired at ${at}`, tenant, key.id, source);
      }
      if (!sourceAllowed(key.cidrs, source)) {
        return refuse(
          'key_source',
          `key ${key.id} may not be used from ${source ?? 'an unknown address'}`,
          tenant,
          key.id,
          source,
        );
      }
      return { key, tenant: tenantRecord, source };
    },
    refused: (auth, code) => failed(auth.tenant.id, { detail: code, key: auth.key.id, source: auth.source }),
  };
}
