import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { Redis } from 'ioredis';
import { createKeys, parseConfig, type Keys, type ServiceLogger } from '@sluice/core';
import { createClient } from '@sluice/client';
import { cancelCampaign } from '@sluice/ops';
import { createQueues, type Queues } from '@sluice/store';
import { createAdmin, type Admin } from '../src/admin.js';

const TOKEN = 'a-token-of-at-least-thirty-two-characters-0001';
const auth = { authorization: `Bearer ${TOKEN}` };
const logger: ServiceLogger = { info: () => undefined, error: () => undefined, fatal: () => undefined };
const MESSAGE = 'campaign recalled was cancelled: it cannot be resumed (cancelling cannot be undone)';

describe('a cancelled campaign through the admin app', () => {
  let redis: Redis;
  let admin: Admin;
  let keys: Keys;
  let queues: Queues;

  beforeAll(async () => {
    redis = new Redis(inject('redisUrl'));
    const config = parseConfig({
      redis: { url: inject('redisUrl'), prefix: `t${randomUUID().slice(0, 8)}` },
      admin: { tokens: [{ actor: 'alice', token: TOKEN }] },
    });
    keys = createKeys(config.redis.prefix);
    queues = createQueues({ redis, keys });
    const client = createClient({ redis: inject('redisUrl'), prefix: config.redis.prefix });
    await client.campaigns.create({ id: 'recalled', name: 'Recalled', priority: 'low' });
    await client.campaigns.create({ id: 'held', priority: 'low' });
    await client.sendBulk([{ from: 'a@acme.test', to: 'r@x.test', subject: 's', text: 't', campaignId: 'recalled' }]);
    await client.campaigns.pause('held');
    await client.close();
    await cancelCampaign({ config, redis, keys }, 'recalled', { actor: 'ops', reason: 'wrong price', waitMs: 0 });
    admin = createAdmin({ config, logger, redis });
    await admin.ready();
  });
  afterAll(async () => {
    await admin.close();
    await queues.close();
    const found = await redis.keys(`${keys.prefix}:*`);
    if (found.length) await redis.del(...found);
    await redis.quit();
  });

  async function expectStillPaused(): Promise<void> {
    expect(await queues.campaign('recalled').isPaused()).toBe(true);
    expect(await redis.hget(keys.campaign('recalled'), 'paused')).toBe('1');
    expect(await redis.hget(keys.campaign('recalled'), 'cancelled')).toBe('1');
  }

  it('refuses the admin API’s resume with 409 campaign_cancelled', async () => {
    const res = await admin.server.inject({ method: 'POST', url: '/api/campaigns/recalled/resume', headers: auth });
    expect(res.statusCode).toBe(409);
    expect(res.json()).toEqual({ error: { code: 'campaign_cancelled', message: MESSAGE } });
    await expectStillPaused();
  });

  it('refuses Bull Board’s Resume with 409 campaign_cancelled, and shows it cancelled', async () => {
    const res = await admin.server.inject({
      method: 'PUT',
      url: '/board/api/queues/campaign-recalled/resume',
      headers: auth,
    });
    expect(res.statusCode).toBe(409);
    expect(res.json()).toMatchObject({ code: 'campaign_cancelled', message: MESSAGE });
    await expectStillPaused();
    const board = await admin.server.inject({ url: '/board/api/queues', headers: auth });
    const names = board.json<{ queues: { name: string; displayName?: string }[] }>().queues.map((q) => q.displayName);
    expect(names).toContain('campaign Recalled (recalled) · cancelled');
    expect(names).toContain('campaign held · paused');
  });

  it('passes a cancelled campaign by in Bull Board’s Resume all, and resumes the others', async () => {
    const res = await admin.server.inject({ method: 'PUT', url: '/board/api/queues/resume', headers: auth });
    expect(res.statusCode).toBe(200);
    await expectStillPaused();
    expect(await queues.campaign('held').isPaused()).toBe(false);
    expect(await redis.hget(keys.campaign('held'), 'paused')).toBeNull();
  });
});
