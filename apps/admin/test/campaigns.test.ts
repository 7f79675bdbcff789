import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Redis } from 'ioredis';
import { parseConfig, type Keys, type ServiceLogger } from '@sluice/core';
import { createClient } from '@sluice/client';
import { cancelCampaign } from '@sluice/ops';
import { createQueues, type Queues } from '@sluice/store';
import { useRedisPrefix } from '../../../test/support/redis-prefix.js';
import { createAdmin, type Admin } from '../src/admin.js';

const r = useRedisPrefix();
const TOKEN = 'a-token-of-at-least-thirty-two-characters-0001';
const auth = { authorization: `Bearer ${TOKEN}` };
const logger: ServiceLogger = { info: () => undefined, error: () => undefined, fatal: () => undefined };
const MESSAGE = 'campaign recalled was cancelled: it cannot be resumed (cancelling cannot be undone)';

describe('a cancelled campaign through the admin app', () => {
  let redis: Redis;
  let admin: Admin;
  let keys: Keys;
  let queues: Queues;

  beforeEach(async () => {
    redis = r.redis;
    keys = r.keys;
    const config = parseConfig({
      redis: { url: r.url, prefix: r.prefix },
      admin: { tokens: [{ actor: 'alice', token: TOKEN }] },
    });
    queues = createQueues({ redis, keys });
    const client = createClient({ redis: r.url, prefix: r.prefix, fleetCheck: 'off' });
    await client.campaigns.create({ id: 'recalled', name: 'Recalled', priority: 'low' });
    await client.campaigns.create({ id: 'held', priority: 'low' });
    await client.sendBulk([{ from: 'a@acme.test', to: 'r@x.test', subject: 's', text: 't', campaignId: 'recalled' }]);
    await client.campaigns.pause('held');
    await client.close();
    await cancelCampaign({ config, redis, keys }, 'recalled', { actor: 'ops', reason: 'wrong price', waitMs: 0 });
    admin = createAdmin({ config, logger, redis });
    await admin.ready();
  });
  afterEach(async () => {
    await admin.close();
    await queues.close();
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
      url: '/board/api/queues/%7Bcampaign-recalled%7D/resume',
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
