import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createApiKeys, createTenants, KEY_SCOPES, type ApiKeys, type KeyInput, type KeyScope } from '@sluice/store';
import { useRedisPrefix } from '../../../test/support/redis-prefix.js';
import { createWorld, mail, type World } from './support.js';

// The HTTP ingest as a backend in another language uses it: plain fetch over a socket, no SDK.
const r = useRedisPrefix();
const PEPPER = 'api-pepper/Mn3bV6cX9zL2kJ5hG8fD1sA4qW7eR0t=';
let world: World;
let base: string;
let keys: ApiKeys;

beforeEach(async () => {
  world = await createWorld(r, { api: { port: 0, keys: { pepper: PEPPER } } });
  base = await world.api.listen();
  await createTenants({ redis: r.redis, keys: r.keys }).create('acme');
  await createTenants({ redis: r.redis, keys: r.keys }).create('other');
  keys = createApiKeys({ redis: r.redis, keys: r.keys, pepper: PEPPER });
});
afterEach(() => world.close());

const key = async (input: Partial<KeyInput> = {}, tenant = 'acme'): Promise<string> =>
  (await keys.create(tenant, { scopes: ['messages:send', 'read'], ...input })).token;

async function call(method: string, path: string, token: string | undefined, body?: unknown) {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: {
      ...(token !== undefined ? { authorization: `Bearer ${token}` } : {}),
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
    },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  return { status: res.status, body: (await res.json()) as Record<string, any>, headers: res.headers };
}

/** A request each route can take (ids that exist or not: refused before they matter). */
const sample = (method: string, url: string) => ({
  path: url.replace(':id', 'msg-none'),
  body: method === 'POST' ? (url.endsWith('batch') ? { messages: [mail()] } : mail()) : undefined,
});

describe('every /v1 route needs a key with its scope', () => {
  it('refuses a missing, malformed, wrong, expired, revoked, out-of-scope or out-of-source key on every route it lists', async () => {
    const routes = world.api.ingestRoutes;
    expect(routes.map((x) => `${x.method} ${x.url}`)).toEqual(
      expect.arrayContaining(['POST /v1/messages', 'POST /v1/messages/batch', 'GET /v1/messages/:id']),
    );
    const good = await key({ scopes: ['admin'] });
    const expiring = await keys.create('acme', { scopes: ['admin'], expiresAt: Date.now() + 300 });
    const revoked = await keys.create('acme', { scopes: ['admin'] });
    await keys.revoke('acme', revoked.key.id);
    const elsewhere = await key({ scopes: ['admin'], cidrs: ['192.0.2.0/24'] });
    const wrongSecret = good.slice(0, 21) + (good[21] === 'A' ? 'B' : 'A') + good.slice(22, 45);
    await new Promise((done) => setTimeout(done, 350));
    for (const route of routes) {
      const { path, body } = sample(route.method, route.url);
      const other = KEY_SCOPES.find((s) => s !== route.scope && s !== 'admin') as KeyScope;
      const outOfScope = await key({ scopes: [other] });
      // A well-formed key whose checksum matches but whose secret is not ours.
      const forged = await forgeWithChecksum(wrongSecret);
      const cases: [string | undefined, number, string][] = [
        [undefined, 401, 'key_missing'],
        ['not-a-key', 401, 'key_malformed'],
        [good.slice(0, -1) + (good.endsWith('a') ? 'b' : 'a'), 401, 'key_malformed'],
        [forged, 401, 'key_invalid'],
        [expiring.token, 401, 'key_expired'],
        [revoked.token, 401, 'key_revoked'],
        [outOfScope, 403, 'key_scope'],
        [elsewhere, 403, 'key_source'],
      ];
      for (const [token, status, code] of cases) {
        const res = await call(route.method, path, token, body);
        expect([route.url, res.status, res.body.error?.code]).toEqual([route.url, status, code]);
      }
      // And with the right key the route answers (not a refusal of the key).
      const ok = await call(route.method, path, good, body);
      expect(ok.body.error?.code ?? '').not.toMatch(/^key_/);
    }
  });

  it('a revoked key is refused at every api process at its next request', async () => {
    const second = await createWorld(r, { api: { port: 0, keys: { pepper: PEPPER } } });
    try {
      const other = await second.api.listen();
      const made = await keys.create('acme', { scopes: ['read'] });
      const at = (b: string) =>
        fetch(`${b}/v1/messages/msg-none`, { headers: { authorization: `Bearer ${made.token}` } }).then(
          (x) => x.status,
        );
      expect([await at(base), await at(other)]).toEqual([404, 404]);
      await keys.revoke('acme', made.key.id, { reason: 'leaked' });
      const revokedAt = Date.now();
      expect([await at(base), await at(other)]).toEqual([401, 401]);
      expect(Date.now() - revokedAt).toBeLessThan(1_000);
    } finally {
      await second.close();
    }
  });
});

describe('when Redis is nearly full', () => {
  it('refuses new mail with 503 storage_full and Retry-After, writing nothing', async () => {
    const tight = { launch: { storage: { holdAbove: 0.000001, rejectAbove: 0.000001 } } };
    const full = await createWorld(r, { api: { port: 0, keys: { pepper: PEPPER } }, ...tight });
    try {
      const at = await full.api.listen();
      const token = await key();
      const before = await world.snapshot();
      for (const [path, body] of [
        ['/v1/messages', mail()],
        ['/v1/messages/batch', { messages: [mail()] }],
      ] as const) {
        const res = await fetch(`${at}${path}`, {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: JSON.stringify(body),
        });
        const answer = (await res.json()) as { error?: { code: string; message: string } };
        expect([res.status, answer.error?.code, res.headers.get('retry-after')]).toEqual([503, 'storage_full', '5']);
        expect(answer.error?.message).toMatch(/launch\.storage\.rejectAbove/);
      }
      expect(await world.snapshot()).toEqual(before);
    } finally {
      await full.close();
    }
  });
});

describe('where mail came from', () => {
  it('records the key and the source address on every message; a forwarded address counts only from a trusted proxy', async () => {
    const made = await keys.create('acme', { scopes: ['messages:send', 'read'] });
    const forwarded = { 'x-forwarded-for': '203.0.113.9' };
    const send = async (b: string, token: string, headers: Record<string, string> = {}) => {
      const res = await fetch(`${b}/v1/messages`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...headers },
        body: JSON.stringify(mail()),
      });
      return { status: res.status, body: (await res.json()) as Record<string, any> };
    };
    // Not trusted (the default): the socket's address, whatever the header says.
    const direct = await send(base, made.token, forwarded);
    expect(direct.status).toBe(202);
    const record = (await call('GET', `/v1/messages/${direct.body.id}`, made.token)).body;
    expect(record.origin).toEqual({ keyId: made.key.id, source: expect.stringMatching(/127\.0\.0\.1$/) });
    const batch = await call('POST', '/v1/messages/batch', made.token, { messages: [mail({ to: 'b@example.test' })] });
    const inBatch = (await call('GET', `/v1/messages/${batch.body.results[0].id}`, made.token)).body;
    expect(inBatch.origin).toEqual(record.origin);
    const office = await keys.create('acme', { scopes: ['messages:send', 'read'], cidrs: ['203.0.113.0/24'] });
    expect((await send(base, office.token, forwarded)).body.error?.code).toBe('key_source');

    // Behind a trusted proxy: the address it forwards is the request's, for the record and the CIDRs.
    const proxied = await createWorld(r, {
      api: { port: 0, keys: { pepper: PEPPER }, trustProxy: ['127.0.0.1', '::1', '::ffff:127.0.0.1'] },
    });
    try {
      const behind = await proxied.api.listen();
      const sent = await send(behind, office.token, forwarded);
      expect(sent.status).toBe(202);
      const seen = (await call('GET', `/v1/messages/${sent.body.id}`, made.token)).body;
      expect(seen.origin).toEqual({ keyId: office.key.id, source: '203.0.113.9' });
    } finally {
      await proxied.close();
    }
  });
});

describe('sending over HTTP', () => {
  it('sends one, answers a batch per message (a refused one written nowhere), and reads status and attempts', async () => {
    const token = await key();
    const one = await call('POST', '/v1/messages', token, mail({ idempotencyKey: 'order-1' }));
    expect(one.status).toBe(202);
    expect(one.body).toMatchObject({ id: expect.any(String), duplicate: false });
    const again = await call('POST', '/v1/messages', token, mail({ idempotencyKey: 'order-1' }));
    expect(again.body).toEqual({ id: one.body.id, duplicate: true });

    const before = await world.snapshot();
    const batch = await call('POST', '/v1/messages/batch', token, {
      messages: [mail({ to: 'a@example.test' }), mail({ to: 'not an address' }), mail({ to: 'c@example.test' })],
    });
    expect(batch.status).toBe(207);
    expect(batch.body).toMatchObject({ accepted: 2, refused: 1 });
    expect(batch.body.results[1]).toMatchObject({
      status: 'refused',
      error: { code: 'invalid_message', path: 'messages.1.to' },
    });
    const ids = [batch.body.results[0].id, batch.body.results[2].id] as string[];
    const written = Object.keys(await world.snapshot()).filter((k) => !(k in before));
    expect(written.some((k) => k.includes('not an address'))).toBe(false);
    for (const id of ids) {
      const status = await call('GET', `/v1/messages/${id}`, token);
      expect(status.body).toMatchObject({ id, tenantId: 'acme', state: 'queued' });
      expect((await call('GET', `/v1/messages/${id}/attempts`, token)).body).toEqual({ id, attempts: [] });
    }
  });

  it("refuses what the key may not send, naming the field, and hides another tenant's messages", async () => {
    const token = await key({ streams: ['otp'], fromDomains: ['acme.test'] });
    const before = await world.snapshot();
    const cases: [unknown, number, string, string][] = [
      [mail({ stream: 'otp', to: 'x' }), 400, 'invalid_message', 'to'],
      [mail(), 403, 'key_scope', 'stream'],
      [mail({ stream: 'otp', from: 'a@evil.test' }), 403, 'key_scope', 'from'],
      [mail({ stream: 'otp', tenantId: 'other' }), 403, 'key_scope', 'tenantId'],
    ];
    for (const [body, status, code, path] of cases) {
      const res = await call('POST', '/v1/messages', token, body);
      expect([res.status, res.body.error]).toEqual([status, expect.objectContaining({ code, path })]);
    }
    expect(await world.snapshot()).toEqual(before);
    const mine = await call('POST', '/v1/messages', token, mail({ stream: 'otp' }));
    expect(mine.status).toBe(202);
    const theirs = await key({ scopes: ['read'] }, 'other');
    expect((await call('GET', `/v1/messages/${mine.body.id}`, theirs)).status).toBe(404);
  });

  it('refuses mail while the owner or the platform has the tenant off, and writes nothing', async () => {
    const token = await key();
    await createTenants({ redis: r.redis, keys: r.keys }).setStatus('acme', {
      party: 'platform',
      enabled: false,
      reason: 'abuse review',
    });
    const before = await world.snapshot();
    const res = await call('POST', '/v1/messages/batch', token, { messages: [mail()] });
    expect(res.status).toBe(403);
    expect(res.body.error).toMatchObject({ code: 'tenant_disabled', message: expect.stringMatching(/abuse review/) });
    expect(await world.snapshot()).toEqual(before);
    const trail = await createTenants({ redis: r.redis, keys: r.keys }).audit('acme');
    expect(trail[0]).toMatchObject({ kind: 'auth.failed', detail: 'tenant_disabled' });
  });
});

/** A key whose checksum is right but whose secret is not one of ours (`body` without its checksum). */
async function forgeWithChecksum(body: string): Promise<string> {
  const { crc32 } = await import('node:zlib');
  const chars = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
  let value = crc32(body);
  let sum = '';
  for (let i = 0; i < 6; i++) {
    sum = chars[value % 62] + sum;
    value = Math.floor(value / 62);
  }
  return body + sum;
}
