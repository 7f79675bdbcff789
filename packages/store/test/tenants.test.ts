import type { Redis } from 'ioredis';
import { beforeEach, describe, expect, it } from 'vitest';
import type { Keys } from '@sluice/core';
import {
  KEY_LENGTH,
  createApiKeys,
  createAuthenticator,
  createTenants,
  parseKeyToken,
  requireMessageAllowed,
  requireScope,
  requireSending,
  type ApiKeys,
  type Authenticator,
  type Tenants,
} from '@sluice/store';
import { useRedisPrefix } from '../../../test/support/redis-prefix.js';

const r = useRedisPrefix();
const PEPPER = 'k3y-pepper/Zq8vW2xN5tR7yU1iO4pA6sD9fG0hJ=';
let redis: Redis;
let keys: Keys;
let now: number;
let tenants: Tenants;
let apiKeys: ApiKeys;
let auth: Authenticator;

beforeEach(() => {
  redis = r.redis;
  keys = r.keys;
  now = Date.parse('2026-12-07T10:00:00Z');
  const clock = (): number => now;
  tenants = createTenants({ redis, keys, clock });
  apiKeys = createApiKeys({ redis, keys, pepper: PEPPER, clock });
  auth = createAuthenticator({ redis, keys, pepper: PEPPER, clock });
});

const code = async (p: Promise<unknown>): Promise<string> =>
  p.then(
    () => 'ok',
    (err: { code?: string }) => err.code ?? String(err),
  );

describe('keys', () => {
  it('shows the token once and stores only its keyed hash', async () => {
    await tenants.create('acme');
    const { token, key } = await apiKeys.create('acme', { scopes: ['messages:send'], name: 'billing' });
    expect(token).toMatch(/^slc_live_[0-9A-Za-z]{42}$/);
    expect(token).toHaveLength(KEY_LENGTH);
    expect(key).toMatchObject({ tenant: 'acme', env: 'live', scopes: ['messages:send'], last4: token.slice(-4) });
    // Nothing in Redis holds the token or its secret part.
    const dump = JSON.stringify(await Promise.all((await redis.keys(`${keys.prefix}:*`)).map((k) => dumpKey(k))));
    expect(dump).not.toContain(token.slice(9 + 12, 9 + 36));
    expect((await auth.authenticate(token, '10.0.0.1')).key.id).toBe(key.id);
    // Listed by id and last four, never the token.
    expect(await apiKeys.list('acme')).toMatchObject([{ id: key.id, last4: token.slice(-4), name: 'billing' }]);
  });

  it('refuses a mistyped, cut, foreign, unknown, revoked or expired key, each with its code', async () => {
    await tenants.create('acme');
    const { token, key } = await apiKeys.create('acme', { scopes: ['read'], expiresAt: now + 60_000 });
    const typo = token.slice(0, 20) + (token[20] === 'a' ? 'b' : 'a') + token.slice(21);
    expect(parseKeyToken(typo)).toBe('checksum');
    expect(await code(auth.authenticate(undefined, undefined))).toBe('key_missing');
    expect(await code(auth.authenticate(typo, undefined))).toBe('key_malformed');
    expect(await code(auth.authenticate(token.slice(0, -1), undefined))).toBe('key_malformed');
    expect(await code(auth.authenticate('SG.abc.def', undefined))).toBe('key_malformed');
    // Made under another pepper: well-formed, same shape, not ours.
    const other = createApiKeys({ redis, keys, pepper: `${PEPPER}x`, clock: () => now });
    const foreign = await other.create('acme', { scopes: ['read'] });
    expect(await code(auth.authenticate(foreign.token, undefined))).toBe('key_invalid');
    await redis.del(keys.keyIndex());
    const fresh = createAuthenticator({ redis, keys, pepper: PEPPER, clock: () => now });
    expect(await code(fresh.authenticate(token, undefined))).toBe('key_invalid');
    await redis.hset(keys.keyIndex(), key.id, 'acme', foreign.key.id, 'acme');
    expect(await code(auth.authenticate(token, undefined))).toBe('ok');
    now += 60_000;
    expect(await code(auth.authenticate(token, undefined))).toBe('key_expired');
    await apiKeys.revoke('acme', foreign.key.id, { reason: 'leaked' });
    const third = createAuthenticator({ redis, keys, pepper: `${PEPPER}x`, clock: () => now });
    expect(await code(third.authenticate(foreign.token, undefined))).toBe('key_revoked');
    // Each refusal of a known key is in its tenant's audit trail, with its source.
    const trail = await tenants.audit('acme');
    expect(trail.filter((e) => e.kind === 'auth.failed').map((e) => e.detail)).toEqual(
      expect.arrayContaining(['key_invalid', 'key_expired', 'key_revoked']),
    );
    expect(trail.find((e) => e.kind === 'key.revoked')).toMatchObject({ key: foreign.key.id, detail: 'leaked' });
  });

  it('keeps a flood of bad requests to one audit entry a second, with its count', async () => {
    await tenants.create('acme');
    const { token } = await apiKeys.create('acme', { scopes: ['read'] });
    const { key } = await auth.authenticate(token, undefined);
    await apiKeys.revoke('acme', key.id);
    for (let i = 0; i < 50; i++) await code(auth.authenticate(token, '192.0.2.9'));
    now += 1_000;
    await code(auth.authenticate(token, '192.0.2.9'));
    const failures = (await tenants.audit('acme')).filter((e) => e.kind === 'auth.failed');
    expect(failures.map((e) => e.count)).toEqual([50, 1]);
    expect(failures[0]!.source).toBe('192.0.2.9');
  });

  it('rotates with overlap: the new key at once, the old one until the chosen time', async () => {
    await tenants.create('acme');
    const old = await apiKeys.create('acme', { scopes: ['messages:send'], streams: ['otp'], cidrs: ['10.0.0.0/8'] });
    const next = await apiKeys.rotate('acme', old.key.id, { oldUntil: now + 3_600_000 });
    expect(next.key).toMatchObject({
      scopes: ['messages:send'],
      streams: ['otp'],
      cidrs: ['10.0.0.0/8'],
      rotatedFrom: old.key.id,
    });
    expect(await code(auth.authenticate(next.token, '10.1.2.3'))).toBe('ok');
    expect(await code(auth.authenticate(old.token, '10.1.2.3'))).toBe('ok');
    now += 3_600_000;
    expect(await code(auth.authenticate(old.token, '10.1.2.3'))).toBe('key_expired');
    expect(await code(auth.authenticate(next.token, '10.1.2.3'))).toBe('ok');
    expect(await code(apiKeys.rotate('acme', next.key.id, { oldUntil: now + 8 * 86_400_000 }))).toBe(
      'invalid_argument',
    );
    expect((await apiKeys.get('acme', old.key.id))?.rotatedTo).toBe(next.key.id);
  });

  it('holds a key to its sources, scopes, streams and from-domains', async () => {
    await tenants.create('acme');
    const { token } = await apiKeys.create('acme', {
      scopes: ['messages:send'],
      streams: ['otp'],
      fromDomains: ['Acme.test'],
      cidrs: ['10.0.0.0/8', '2001:db8::/32', '192.0.2.7'],
    });
    expect(await code(auth.authenticate(token, '11.0.0.1'))).toBe('key_source');
    expect(await code(auth.authenticate(token, undefined))).toBe('key_source');
    expect(await code(auth.authenticate(token, '::ffff:10.9.9.9'))).toBe('ok');
    expect(await code(auth.authenticate(token, '2001:db8::1'))).toBe('ok');
    expect(await code(auth.authenticate(token, '192.0.2.7'))).toBe('ok');
    const a = await auth.authenticate(token, '10.0.0.1');
    expect(() => requireScope(a, 'messages:send')).not.toThrow();
    expect(() => requireScope(a, 'read')).toThrow(expect.objectContaining({ code: 'key_scope' }));
    expect(() =>
      requireMessageAllowed(a.key, { stream: 'otp', from: 'Acme <no-reply@acme.test>' }, 'messages.0'),
    ).not.toThrow();
    expect(() => requireMessageAllowed(a.key, { from: 'a@acme.test' }, 'messages.1')).toThrow(
      expect.objectContaining({ code: 'key_scope', path: 'messages.1.stream' }),
    );
    expect(() => requireMessageAllowed(a.key, { stream: 'otp', from: 'a@evil.test' }, 'messages.2')).toThrow(
      expect.objectContaining({ code: 'key_scope', path: 'messages.2.from' }),
    );
  });

  it('names the bad field of a new key and writes nothing', async () => {
    await tenants.create('acme');
    const bad = [
      [{ scopes: [] }, 'scopes'],
      [{ scopes: ['mail.send'] }, 'scopes.0'],
      [{ scopes: ['read'], cidrs: ['10.0.0.0/33'] }, 'cidrs.0'],
      [{ scopes: ['read'], fromDomains: ['not a domain'] }, 'fromDomains.0'],
      [{ scopes: ['read'], expiresAt: now - 1 }, 'expiresAt'],
    ] as const;
    for (const [input, path] of bad) {
      await expect(apiKeys.create('acme', input as never)).rejects.toMatchObject({ code: 'invalid_argument', path });
    }
    await expect(apiKeys.create('nobody', { scopes: ['read'] })).rejects.toMatchObject({ code: 'unknown_tenant' });
    const unpeppered = createApiKeys({ redis, keys, pepper: undefined });
    await expect(unpeppered.create('acme', { scopes: ['read'] })).rejects.toMatchObject({ code: 'keys_unconfigured' });
    expect(await apiKeys.list('acme')).toEqual([]);
    expect(await redis.hlen(keys.keyIndex())).toBe(0);
  });
});

describe('tenants', () => {
  it('stops sending while either party has it off, and says who and why', async () => {
    const { created } = await tenants.create('acme');
    expect(created).toBe(true);
    expect((await tenants.create('acme')).created).toBe(false);
    const { token } = await apiKeys.create('acme', { scopes: ['messages:send'] });
    const sending = async (): Promise<string> => {
      const a = await auth.authenticate(token, undefined);
      return code(Promise.resolve().then(() => requireSending(a)));
    };
    expect(await sending()).toBe('ok');
    await tenants.setStatus('acme', { party: 'platform', enabled: false, reason: 'abuse review', actor: 'ops-ana' });
    const a = await auth.authenticate(token, undefined);
    expect(() => requireSending(a)).toThrow(/platform disabled it: abuse review/);
    await tenants.setStatus('acme', { party: 'platform', enabled: true, reason: 'cleared' });
    expect(await sending()).toBe('ok');
    await tenants.setStatus('acme', { party: 'owner', enabled: false, reason: 'migrating' });
    expect(await sending()).toBe('tenant_disabled');
    expect((await tenants.list()).map((t) => [t.id, t.owner.enabled, t.platform.enabled])).toEqual([
      ['acme', false, true],
    ]);
    const trail = (await tenants.audit('acme')).map((e) => `${e.kind} ${e.actor} ${e.detail}`);
    expect(trail).toContain('tenant.status ops-ana platform disabled: abuse review');
    await expect(tenants.setStatus('nobody', { party: 'owner', enabled: false, reason: '' })).rejects.toMatchObject({
      code: 'unknown_tenant',
    });
  });
});

describe('key statuses', () => {
  it("stops mail sent with a key while its owner or the platform has it off; the tenant's other keys send", async () => {
    await tenants.create('acme');
    const one = await apiKeys.create('acme', { scopes: ['messages:send'] });
    const two = await apiKeys.create('acme', { scopes: ['messages:send'] });
    const sending = async (token: string): Promise<string> => {
      const a = await auth.authenticate(token, undefined);
      return code(Promise.resolve().then(() => requireSending(a)));
    };
    const off = await apiKeys.setStatus('acme', one.key.id, {
      party: 'platform',
      enabled: false,
      reason: 'leaked',
      actor: 'ops-ana',
    });
    expect(off.platform).toMatchObject({ enabled: false, reason: 'leaked', by: 'ops-ana' });
    expect([await sending(one.token), await sending(two.token)]).toEqual(['key_disabled', 'ok']);
    await apiKeys.setStatus('acme', one.key.id, { party: 'owner', enabled: false, reason: 'moving' });
    await apiKeys.setStatus('acme', one.key.id, { party: 'platform', enabled: true, reason: 'rotated' });
    expect(await sending(one.token)).toBe('key_disabled');
    await apiKeys.setStatus('acme', one.key.id, { party: 'owner', enabled: true, reason: 'done' });
    expect(await sending(one.token)).toBe('ok');
    // A rotation keeps the statuses: a key disabled stays so in its successor.
    await apiKeys.setStatus('acme', two.key.id, { party: 'platform', enabled: false, reason: 'review' });
    const next = await apiKeys.rotate('acme', two.key.id, { oldUntil: now });
    expect(await sending(next.token)).toBe('key_disabled');
    const trail = (await tenants.audit('acme')).map((e) => `${e.kind} ${e.key} ${e.detail}`);
    expect(trail).toContain(`key.status ${one.key.id} platform disabled: leaked`);
    await expect(
      apiKeys.setStatus('other', one.key.id, { party: 'owner', enabled: false, reason: 'x' }),
    ).rejects.toMatchObject({ code: 'unknown_key' });
  });
});

async function dumpKey(k: string): Promise<unknown> {
  const type = await redis.type(k);
  if (type === 'hash') return redis.hgetall(k);
  if (type === 'set') return redis.smembers(k);
  if (type === 'stream') return redis.xrange(k, '-', '+');
  return redis.get(k);
}
