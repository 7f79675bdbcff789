import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Queue, UnrecoverableError, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { createKeys, parseConfig, type ServiceLogger, type SluiceConfig } from '@sluice/core';
import { createClient } from '@sluice/client';
import { useRedisPrefix } from '../../../test/support/redis-prefix.js';
import { createAdmin, type Admin } from '../src/admin.js';

const r = useRedisPrefix();

const TOKEN = 'a-token-of-at-least-thirty-two-characters-0001';
const OTHER = 'b-token-of-at-least-thirty-two-characters-0002';
const logger: ServiceLogger = { info: () => undefined, error: () => undefined, fatal: () => undefined };

function configWith(admin: Record<string, unknown>, prefix = r.prefix): SluiceConfig {
  return parseConfig({ redis: { url: r.url, prefix }, admin });
}

async function waitUntil(check: () => Promise<boolean>, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`not true within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** A concrete URL for a route pattern: every parameter and wildcard filled in. */
const concrete = (url: string): string => url.replace(/:[A-Za-z]+/g, 'x').replace(/\*/g, 'x.js');

describe('admin auth', () => {
  let redis: Redis;
  let admin: Admin;
  let prefix: string;
  let queuedId: string;
  beforeEach(async () => {
    redis = r.redis;
    prefix = r.prefix;
    await redis.hset(createKeys(prefix).campaign('spring'), {
      createdAt: String(Date.now()),
      name: 'Spring sale',
      priority: 'low',
    });
    await redis.sadd(createKeys(prefix).campaigns(), 'spring');
    // A campaign with a message in its queue (no scheduler runs here): what Empty would drop.
    const client = createClient({ redis: r.url, prefix, fleetCheck: 'off' });
    await client.campaigns.create({ id: 'sale', priority: 'low' });
    const [queued] = await client.sendBulk([
      { from: 'a@acme.test', to: 'r@x.test', subject: 's', text: 't', campaignId: 'sale' },
    ]);
    queuedId = queued!.id;
    await client.close();
    admin = createAdmin({
      config: configWith(
        {
          tokens: [
            { actor: 'alice', token: TOKEN },
            { actor: 'bob', token: OTHER },
          ],
        },
        prefix,
      ),
      logger,
      redis,
    });
    await admin.ready();
  });
  afterEach(async () => {
    await admin.close();
  });

  it('refuses every route, Bull Board’s static assets and API included, without a valid token', async () => {
    const routes = admin.routes.filter(
      (r) => r.method !== 'HEAD' || !admin.routes.some((o) => o.url === r.url && o.method === 'GET'),
    );
    const urls = new Set(routes.map((r) => r.url));
    // The board's UI, its assets and its API, the dashboard and our API are all there.
    for (const u of [
      '/board',
      '/board/api/queues',
      '/board/api/queues/:queueName/pause',
      '/dashboard',
      '/dashboard/dashboard.js',
      '/dashboard/dashboard-parts.js',
      '/api/status',
      '/api/overrides',
      '/api/campaigns/:id/pause',
    ]) {
      expect(
        [...urls].some((x) => x === u || x === `${u}/`),
        u,
      ).toBe(true);
    }
    expect([...urls].some((u) => u.startsWith('/board/static'))).toBe(true);
    const bad = [
      undefined,
      `Bearer ${TOKEN.slice(0, -1)}x`,
      `Bearer ${TOKEN}x`,
      'Bearer ',
      `Basic ${Buffer.from(`alice:${TOKEN}x`).toString('base64')}`,
      `Token ${TOKEN}`,
    ];
    let refused = 0;
    for (const r of routes) {
      for (const authorization of bad) {
        const res = await admin.server.inject({
          method: r.method as 'GET',
          url: concrete(r.url),
          headers: authorization ? { authorization } : {},
          ...(r.method === 'GET' || r.method === 'HEAD' ? {} : { payload: {} }),
        });
        expect(res.statusCode, `${r.method} ${r.url} with ${authorization ?? 'nothing'}`).toBe(401);
        expect(res.headers['www-authenticate']).toMatch(/^Basic /);
        refused++;
      }
    }
    // An unknown path says nothing either.
    expect((await admin.server.inject({ url: '/nope' })).statusCode).toBe(401);
    console.log(`auth: ${routes.length} routes × ${bad.length} bad credentials refused (${refused} requests)`);
  });

  it('lets a token in as Bearer or as the Basic password, and knows who it is', async () => {
    const bearer = await admin.server.inject({ url: '/api/status', headers: { authorization: `Bearer ${TOKEN}` } });
    expect(bearer.statusCode).toBe(200);
    const campaigns = bearer.json<{ campaigns: { id: string; name: string; state: string }[] }>().campaigns;
    expect(campaigns.find((c) => c.id === 'spring')).toMatchObject({ name: 'Spring sale', state: 'active' });
    const basic = await admin.server.inject({
      url: '/dashboard',
      headers: { authorization: `Basic ${Buffer.from(`anyone:${OTHER}`).toString('base64')}` },
    });
    expect(basic.statusCode).toBe(200);
    expect(basic.body).toContain('<script src="/dashboard/dashboard.js">');
    const board = await admin.server.inject({
      url: '/board/api/queues',
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    expect(board.statusCode).toBe(200);
    const names = board
      .json<{ queues: { name: string; displayName?: string }[] }>()
      .queues.map((q) => q.displayName ?? q.name);
    expect(names).toContain('campaign Spring sale (spring) · active');
    expect(names).toContain('{intake-critical}');
    expect(names).toContain('dispatch-low-{b32.76}');
    const pause = await admin.server.inject({
      method: 'POST',
      url: '/api/campaigns/spring/pause',
      headers: { authorization: `Bearer ${OTHER}` },
    });
    expect(pause.json()).toEqual({ id: 'spring', paused: true, actor: 'bob' });
    expect(await redis.hget(createKeys(prefix).campaign('spring'), 'paused')).toBe('1');
  });

  it('pauses the campaign, not only its queue, from Bull Board', async () => {
    const auth = { authorization: `Bearer ${TOKEN}` };
    await admin.server.inject({ method: 'POST', url: '/api/campaigns/spring/resume', headers: auth });
    expect(await redis.hget(createKeys(prefix).campaign('spring'), 'paused')).toBe(null);
    const res = await admin.server.inject({
      method: 'PUT',
      url: '/board/api/queues/%7Bcampaign-spring%7D/pause',
      headers: auth,
    });
    expect(res.statusCode).toBe(200);
    expect(await redis.hget(createKeys(prefix).campaign('spring'), 'paused')).toBe('1');
    const status = (await admin.server.inject({ url: '/api/status', headers: auth })).json<{
      campaigns: { id: string; state: string }[];
    }>();
    expect(status.campaigns.find((c) => c.id === 'spring')?.state).toBe('paused');
    await admin.server.inject({ method: 'PUT', url: '/board/api/queues/%7Bcampaign-spring%7D/resume', headers: auth });
    expect(await redis.hget(createKeys(prefix).campaign('spring'), 'paused')).toBe(null);
  });

  it('lets the board pause and resume campaigns and retry failed jobs, and refuses every write that would drop or move a message', async () => {
    const auth = { authorization: `Bearer ${TOKEN}` };
    const put = (path: string) =>
      admin.server.inject({ method: 'PUT', url: `/board/api/queues/${path}`, headers: auth, payload: {} });
    const board = async (name: string) => {
      const res = await admin.server.inject({
        url: `/board/api/queues?activeQueue=${name}&status=waiting`,
        headers: auth,
      });
      return res
        .json<{ queues: { name: string; counts: Record<string, number> }[] }>()
        .queues.find((q) => q.name === name)!;
    };
    const client = createClient({ redis: r.url, prefix, fleetCheck: 'off' });
    try {
      const writes = [
        '%7Bcampaign-sale%7D/empty',
        '%7Bcampaign-sale%7D/obliterate',
        '%7Bcampaign-sale%7D/clean/completed',
        '%7Bcampaign-sale%7D/retry/completed',
        '%7Bcampaign-sale%7D/promote',
        `%7Bcampaign-sale%7D/${queuedId}/promote`,
        '%7Bcampaign-sale%7D/rate-limit',
        'dispatch-low-%7Bb32.76%7D/pause',
        'dispatch-low-%7Bb32.76%7D/empty',
        'intake-critical/obliterate',
      ];
      for (const w of writes) expect((await put(w)).statusCode, w).toBe(405);
      const add = await admin.server.inject({
        method: 'POST',
        url: '/board/api/queues/%7Bcampaign-sale%7D/add',
        headers: auth,
        payload: { name: 'x', data: {} },
      });
      expect(add.statusCode).toBe(405);
      expect(add.json<{ message: string }>().message).toContain('sluice campaigns cancel');
      // Nothing was dropped, moved or added: the message still waits, and is still queued.
      expect(await client.messages.status(queuedId)).toMatchObject({ state: 'queued' });
      expect((await board('{campaign-sale}')).counts.waiting).toBe(1);

      // A job that failed (here: a processor that gives up on it) is retried from the board.
      const connection = new Redis(r.url, { maxRetriesPerRequest: null });
      const worker = new Worker(
        '{campaign-sale}',
        async () => {
          throw new UnrecoverableError('an unexpected error');
        },
        { connection, prefix },
      );
      await waitUntil(async () => (await board('{campaign-sale}')).counts.failed === 1);
      await worker.close();
      await connection.quit();
      expect((await put('%7Bcampaign-sale%7D/retry/failed')).statusCode).toBe(200);
      expect((await board('{campaign-sale}')).counts).toMatchObject({ waiting: 1, failed: 0 });
      expect(await client.messages.status(queuedId)).toMatchObject({ state: 'queued' });

      // Pause all / resume all act on the campaigns, and pass the class queues by.
      expect((await put('pause')).statusCode).toBe(200);
      expect(await redis.hget(createKeys(prefix).campaign('sale'), 'paused')).toBe('1');
      const dispatchLow = new Queue('dispatch-low-{b32.76}', { connection: redis, prefix });
      expect(await dispatchLow.isPaused()).toBe(false);
      await dispatchLow.close();
      expect((await put('resume')).statusCode).toBe(200);
      expect(await redis.hget(createKeys(prefix).campaign('sale'), 'paused')).toBe(null);
    } finally {
      await client.close();
    }
  });

  it('refuses state changes from another origin, even with credentials', async () => {
    const res = await admin.server.inject({
      method: 'POST',
      url: '/api/campaigns/spring/pause',
      headers: { authorization: `Bearer ${TOKEN}`, origin: 'https://evil.example', host: 'localhost:8090' },
    });
    expect(res.statusCode).toBe(403);
    expect(await redis.hget(createKeys(prefix).campaign('spring'), 'paused')).toBe(null);
  });
});

describe('admin start', () => {
  it('refuses to start without tokens, naming admin.tokens', () => {
    expect(() => createAdmin({ config: configWith({ host: '0.0.0.0' }), logger })).toThrow(/admin\.tokens/);
    expect(() => createAdmin({ config: configWith({}), logger })).toThrow(/admin\.tokens/);
  });

  it('refuses to start with a token of 32 identical characters (or any weak one), naming its path, never the token', () => {
    // A config built in code skips the schema: the app checks again before it listens.
    const weak = 'k'.repeat(32);
    const config = configWith({});
    config.admin.tokens = [
      { actor: 'alice', token: TOKEN },
      { actor: 'bob', token: weak },
    ];
    let err: unknown;
    try {
      createAdmin({ config, logger, redis: r.redis });
    } catch (e) {
      err = e;
    }
    expect(err).toMatchObject({ code: 'invalid_config', path: 'admin.tokens.1.token' });
    expect((err as Error).message).toMatch(/^admin\.tokens\.1\.token \(actor bob\): has 1 distinct characters/);
    expect((err as Error).message).not.toContain(weak);
    // Through the config file's schema, the same rule.
    expect(() => configWith({ tokens: [{ actor: 'bob', token: weak }] })).toThrow(/admin\.tokens\.0\.token/);
  });

  it('allows devNoAuth only on loopback', async () => {
    expect(() => createAdmin({ config: configWith({ host: '0.0.0.0', devNoAuth: true }), logger })).toThrow(
      /admin\.devNoAuth/,
    );
    expect(() => createAdmin({ config: configWith({ host: '10.0.0.5', devNoAuth: true }), logger })).toThrow(
      /admin\.devNoAuth/,
    );
    const admin = createAdmin({ config: configWith({ host: '127.0.0.1', devNoAuth: true }), logger, redis: r.redis });
    try {
      await admin.ready();
      expect((await admin.server.inject({ url: '/api/status' })).statusCode).toBe(200);
    } finally {
      await admin.close();
    }
  });
});
