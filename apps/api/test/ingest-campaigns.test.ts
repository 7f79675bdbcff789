import { describe, expect, it } from 'vitest';
import type { KeyScope } from '@sluice/store';
import { useRedisPrefix } from '../../../test/support/redis-prefix.js';
import { callIngest, useIngest } from './support.js';

// Campaigns over HTTP, with plain fetch, as a backend in another language drives them.
const r = useRedisPrefix();
const ingest = useIngest(r);

const key = async (tenant = 'acme', scopes: KeyScope[] = ['campaigns:write', 'messages:send', 'read']) =>
  (await ingest().keys.create(tenant, { scopes })).token;

const call = (method: string, path: string, token: string, body?: unknown) =>
  callIngest(ingest(), method, path, token, body);

describe('campaigns over HTTP', () => {
  it('creates, reads, pauses, resumes and cancels a campaign of the key’s tenant only', async () => {
    const token = await key();
    const made = await call('POST', '/v1/campaigns', token, { id: 'spring', priority: 'low' });
    expect([made.status, made.body]).toEqual([201, expect.objectContaining({ id: 'spring', tenantId: 'acme' })]);
    expect((await call('POST', '/v1/campaigns', token, { id: 'spring' })).body.error?.code).toBe('campaign_exists');
    expect((await call('POST', '/v1/campaigns', token, { id: 'x', tenantId: 'other' })).body.error).toMatchObject({
      code: 'key_scope',
      path: 'tenantId',
    });
    expect((await call('POST', '/v1/campaigns', token, { id: 'bad id!' })).status).toBe(400);

    // Mail of the campaign, sent over HTTP too.
    const sent = await call('POST', '/v1/messages', token, {
      from: 'news@acme.test',
      to: 'jane@example.test',
      subject: 'Spring',
      text: 'Hello',
      campaignId: 'spring',
    });
    expect(sent.status).toBe(202);

    expect((await call('POST', '/v1/campaigns/spring/pause', token)).body).toMatchObject({ paused: true });
    expect((await call('GET', '/v1/campaigns/spring', token)).body).toMatchObject({ paused: true, pending: 1 });
    expect((await call('POST', '/v1/campaigns/spring/resume', token)).body).toMatchObject({ paused: false });

    // Another tenant's key finds nothing, whatever it asks.
    const theirs = await key('other');
    for (const [method, path] of [
      ['GET', '/v1/campaigns/spring'],
      ['POST', '/v1/campaigns/spring/pause'],
      ['POST', '/v1/campaigns/spring/cancel'],
    ] as const) {
      const res = await call(method, path, theirs, method === 'POST' ? { reason: 'x' } : undefined);
      expect([res.status, res.body.error?.code]).toEqual([404, 'unknown_campaign']);
    }
    expect((await call('GET', '/v1/campaigns/spring', token)).body).toMatchObject({ paused: false, cancelled: false });

    expect((await call('POST', '/v1/campaigns/spring/cancel', token, {})).body.error).toMatchObject({
      code: 'invalid_argument',
      path: 'reason',
    });
    const cancelled = await call('POST', '/v1/campaigns/spring/cancel', token, { reason: 'wrong price' });
    expect([cancelled.status, cancelled.body]).toEqual([
      200,
      expect.objectContaining({ cancelled: 1, stillInFlight: [] }),
    ]);
    const message = await call('GET', `/v1/messages/${sent.body.id}`, token);
    expect(message.body).toMatchObject({ state: 'cancelled' });
    expect((await call('POST', '/v1/campaigns/spring/resume', token)).body.error?.code).toBe('campaign_cancelled');
  });

  it('launches with a forecast, answering 503 no_scheduler when none decides in time', async () => {
    const token = await key();
    await call('POST', '/v1/campaigns', token, { id: 'autumn' });
    const res = await call('POST', '/v1/campaigns/autumn/launch', token, {
      total: 100,
      sample: { 'd.test': 1 },
      waitMs: 200,
    });
    expect([res.status, res.body.error?.code]).toEqual([503, 'no_scheduler']);
    const bad = await call('POST', '/v1/campaigns/autumn/launch', token, { total: 100, waitMs: 60_000 });
    expect([bad.status, bad.body.error?.path]).toEqual([400, 'waitMs']);
  });

  it('needs campaigns:write to change a campaign and read to see one', async () => {
    const reader = await key('acme', ['read']);
    const writer = await key('acme', ['campaigns:write']);
    expect((await call('POST', '/v1/campaigns', reader, { id: 'w' })).body.error?.code).toBe('key_scope');
    expect((await call('POST', '/v1/campaigns', writer, { id: 'w' })).status).toBe(201);
    expect((await call('GET', '/v1/campaigns/w', writer)).body.error?.code).toBe('key_scope');
    expect((await call('GET', '/v1/campaigns/w', reader)).status).toBe(200);
  });
});
