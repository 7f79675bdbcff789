import { describe, expect, it } from 'vitest';
import { createIdempotency, createTenants, IDEMPOTENCY_KEEP_MS } from '@sluice/store';
import { useRedisPrefix } from '../../../test/support/redis-prefix.js';
import { mail, useIngest } from './support.js';

// The Idempotency-Key header of the HTTP ingest, over a real socket with plain fetch, as a
// backend retrying a request it never saw answered uses it.
const r = useRedisPrefix();
const ingest = useIngest(r, ['acme']);

const key = async (): Promise<{ token: string; id: string }> => {
  const made = await ingest().keys.create('acme', { scopes: ['messages:send', 'read'] });
  return { token: made.token, id: made.key.id };
};

async function post(path: string, token: string, body: unknown, idempotencyKey?: string) {
  const res = await fetch(`${ingest().base}${path}`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${token}`,
      'content-type': 'application/json',
      ...(idempotencyKey !== undefined ? { 'idempotency-key': idempotencyKey } : {}),
    },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Record<string, any>, headers: res.headers };
}

/** The message records written so far. */
const records = async () => (await r.redis.keys(`${r.keys.prefix}:*:msg:*`)).length;

describe('Idempotency-Key', () => {
  it('replays the first answer to a repeat with the same body, sending nothing again', async () => {
    const { token } = await key();
    const first = await post('/v1/messages', token, mail(), 'retry-1');
    expect(first.status).toBe(202);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    const again = await post('/v1/messages', token, mail(), 'retry-1');
    expect([again.status, again.body]).toEqual([202, first.body]);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(await records()).toBe(1);
    // A batch too: the same per-message answers, the same ids.
    const batch = { messages: [mail({ to: 'a@example.test' }), mail({ to: 'bad' })] };
    const b1 = await post('/v1/messages/batch', token, batch, 'retry-2');
    const b2 = await post('/v1/messages/batch', token, batch, 'retry-2');
    expect(b1.status).toBe(207);
    expect([b2.status, b2.body]).toEqual([207, b1.body]);
    expect(await records()).toBe(2);
    // Without the header, each request is its own.
    await post('/v1/messages', token, mail(), undefined);
    await post('/v1/messages', token, mail(), undefined);
    expect(await records()).toBe(4);
  });

  it('refuses the key with another body (422) and while its first request is answered (409, Retry-After)', async () => {
    const { token, id } = await key();
    expect((await post('/v1/messages', token, mail(), 'order-7')).status).toBe(202);
    const other = await post('/v1/messages', token, mail({ to: 'john@example.test' }), 'order-7');
    expect([other.status, other.body.error]).toEqual([
      422,
      expect.objectContaining({ code: 'idempotency_key_reused', path: 'Idempotency-Key' }),
    ]);
    // Another api process has claimed this key for the same body and not answered yet.
    await createIdempotency({ redis: r.redis, keys: r.keys }).claim(
      { tenantId: 'acme', keyId: id, route: 'POST /v1/messages', idempotencyKey: 'order-8' },
      mail(),
    );
    const busy = await post('/v1/messages', token, mail(), 'order-8');
    expect([busy.status, busy.body.error?.code, busy.headers.get('retry-after')]).toEqual([
      409,
      'idempotency_in_flight',
      '1',
    ]);
    expect(await records()).toBe(1);
  });

  it('is scoped to the API key and the route, kept 24 h, and refuses a bad header', async () => {
    const a = await key();
    const b = await key();
    const one = await post('/v1/messages', a.token, mail(), 'same');
    const two = await post('/v1/messages', b.token, mail(), 'same');
    const three = await post('/v1/messages/batch', a.token, { messages: [mail()] }, 'same');
    expect([one.status, two.status, three.status]).toEqual([202, 202, 202]);
    expect(new Set([one.body.id, two.body.id, three.body.results[0].id]).size).toBe(3);
    const [stored] = await r.redis.keys(`${r.keys.prefix}:idem:*`);
    const ttl = await r.redis.pttl(stored!);
    expect(ttl).toBeGreaterThan(IDEMPOTENCY_KEEP_MS - 60_000);
    expect(ttl).toBeLessThanOrEqual(IDEMPOTENCY_KEEP_MS);
    for (const bad of ['x'.repeat(256), 'with space']) {
      const res = await post('/v1/messages', a.token, mail(), bad);
      expect([res.status, res.body.error?.code]).toEqual([400, 'idempotency_key_invalid']);
    }
  });

  it('lets the key go after an answer that may change (a refused key), so a repeat runs again', async () => {
    const { token } = await key();
    await createTenants({ redis: r.redis, keys: r.keys }).setStatus('acme', {
      party: 'owner',
      enabled: false,
      reason: 'paused by admin',
    });
    expect((await post('/v1/messages', token, mail(), 'later')).status).toBe(403);
    await createTenants({ redis: r.redis, keys: r.keys }).setStatus('acme', {
      party: 'owner',
      enabled: true,
      reason: 'back',
    });
    const res = await post('/v1/messages', token, mail(), 'later');
    expect([res.status, res.headers.get('idempotent-replayed')]).toEqual([202, null]);
  });
});
