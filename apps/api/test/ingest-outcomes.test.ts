import { describe, expect, it } from 'vitest';
import type { KeyScope } from '@sluice/store';
import { useRedisPrefix } from '../../../test/support/redis-prefix.js';
import { callIngest, mail, useIngest, type IngestAnswer } from './support.js';

// Outcomes over HTTP with plain fetch: each tenant reads its own events only.
const r = useRedisPrefix();
const ingest = useIngest(r);

const key = async (tenant: string, scopes: KeyScope[] = ['outcomes:read', 'messages:send', 'campaigns:write']) =>
  (await ingest().keys.create(tenant, { scopes })).token;

/** An outcome event as a read answers it. */
interface Event {
  id: string;
  messageId: string;
  state: string;
  tenantId: string;
}
const eventsOf = (answer: IngestAnswer): Event[] => answer.body.events as Event[];

const call = (method: string, path: string, token: string, body?: unknown) =>
  callIngest(ingest(), method, path, token, body);

/** Sends `count` messages of a campaign of the key's tenant and cancels it: each ends `cancelled`, an outcome event. */
async function cancelledMail(token: string, campaign: string, count: number): Promise<string[]> {
  await call('POST', '/v1/campaigns', token, { id: campaign });
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const sent = await call('POST', '/v1/messages', token, mail({ to: `u${i}@example.test`, campaignId: campaign }));
    ids.push(sent.body.id as string);
  }
  expect((await call('POST', `/v1/campaigns/${campaign}/cancel`, token, { reason: 'test' })).status).toBe(200);
  return ids;
}

describe('outcomes over HTTP', () => {
  it("reads and acknowledges a group's events: the tenant's own only, again until acknowledged", async () => {
    const acme = await key('acme');
    const other = await key('other');
    expect((await call('POST', '/v1/outcomes/groups', acme, { name: 'crm' })).status).toBe(201);
    expect((await call('POST', '/v1/outcomes/groups', acme, { name: 'crm' })).body).toMatchObject({ created: false });
    expect((await call('POST', '/v1/outcomes/groups', other, { name: 'crm' })).status).toBe(201);
    expect((await call('GET', '/v1/outcomes/groups', acme)).body.groups).toEqual(['crm']);

    const theirs = await cancelledMail(other, 'their-news', 3);
    const ours = await cancelledMail(acme, 'our-news', 2);

    const first = await call('POST', '/v1/outcomes/groups/crm/read', acme, { consumer: 'c1', count: 10 });
    expect(first.status).toBe(200);
    // In the order they were cancelled, which is not the order they were sent.
    expect(
      eventsOf(first)
        .map((e) => [e.messageId, e.state, e.tenantId])
        .sort(),
    ).toEqual(ours.map((id) => [id, 'cancelled', 'acme']).sort());
    // Not acknowledged: the same consumer gets them again.
    const again = await call('POST', '/v1/outcomes/groups/crm/read', acme, { consumer: 'c1' });
    expect(eventsOf(again).map((e) => e.id)).toEqual(eventsOf(first).map((e) => e.id));
    const acked = await call('POST', '/v1/outcomes/groups/crm/ack', acme, { ids: eventsOf(first).map((e) => e.id) });
    expect(acked.body).toEqual({ acknowledged: 2 });
    // Nothing left; a wait answers empty once it is over.
    const t0 = Date.now();
    expect((await call('POST', '/v1/outcomes/groups/crm/read', acme, { consumer: 'c1', waitMs: 400 })).body).toEqual({
      events: [],
    });
    expect(Date.now() - t0).toBeGreaterThanOrEqual(350);

    // The other tenant's group of the same name is its own, with its own events.
    const mine = await call('POST', '/v1/outcomes/groups/crm/read', other, { consumer: 'x', count: 10 });
    expect(
      eventsOf(mine)
        .map((e) => e.messageId)
        .sort(),
    ).toEqual(theirs.sort());

    expect((await call('DELETE', '/v1/outcomes/groups/crm', acme)).status).toBe(204);
    const gone = await call('POST', '/v1/outcomes/groups/crm/read', acme, { consumer: 'c1' });
    expect([gone.status, gone.body.error?.code]).toEqual([404, 'unknown_group']);
    expect((await call('GET', '/v1/outcomes/groups', other)).body.groups).toEqual(['crm']);
  });

  it('refuses bad names, counts and ids naming the field, and a sixth group', async () => {
    const acme = await key('acme');
    const bad = async (path: string, body: unknown) => (await call('POST', path, acme, body)).body.error;
    expect(await bad('/v1/outcomes/groups', { name: 'no spaces' })).toMatchObject({
      code: 'invalid_argument',
      path: 'name',
    });
    expect(await bad('/v1/outcomes/groups', { name: 'crm', from: 'yesterday' })).toMatchObject({ path: 'from' });
    await call('POST', '/v1/outcomes/groups', acme, { name: 'crm' });
    expect(await bad('/v1/outcomes/groups/crm/read', { count: 0 })).toMatchObject({ path: 'count' });
    expect(await bad('/v1/outcomes/groups/crm/read', { waitMs: 60_000 })).toMatchObject({ path: 'waitMs' });
    expect(await bad('/v1/outcomes/groups/crm/read', { consumer: 'a b' })).toMatchObject({ path: 'consumer' });
    expect(await bad('/v1/outcomes/groups/crm/ack', { ids: ['nope'] })).toMatchObject({ path: 'ids' });
    for (const name of ['b', 'c', 'd', 'e']) await call('POST', '/v1/outcomes/groups', acme, { name });
    expect(await bad('/v1/outcomes/groups', { name: 'f' })).toMatchObject({ code: 'invalid_argument', path: 'name' });
  });
});
