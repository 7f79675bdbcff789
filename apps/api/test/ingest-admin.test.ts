import { expect, it } from 'vitest';
import { useRedisPrefix } from '../../../test/support/redis-prefix.js';
import { callIngest, mail, useIngest } from './support.js';

// A tenant's own admin over HTTP: its keys, and the owner's statuses of the tenant and its keys.
const r = useRedisPrefix();
const ingest = useIngest(r);

const call = (method: string, path: string, token: string, body?: unknown) =>
  callIngest(ingest(), method, path, token, body);

it("lets an admin key list the tenant's keys and stop mail of one key, or of the whole tenant", async () => {
  const { token: admin, key: adminKey } = await ingest().keys.create('acme', { scopes: ['admin'] });
  const sender = await ingest().keys.create('acme', { scopes: ['messages:send'], name: 'billing' });
  const theirs = await ingest().keys.create('other', { scopes: ['messages:send'] });

  const listed = await call('GET', '/v1/keys', admin);
  const keys = listed.body.keys as { name: string; shown: string }[];
  expect(keys.map((k) => k.name).sort()).toEqual(['', 'billing']);
  expect(JSON.stringify(listed.body)).not.toMatch(/hash|slc_live_[0-9A-Za-z]{42}/);
  expect(keys.find((k) => k.name === 'billing')?.shown).toBe(`slc_live_${sender.key.id}…${sender.token.slice(-4)}`);

  const stop = await call('POST', `/v1/keys/${sender.key.id}/status`, admin, { enabled: false, reason: 'rotating' });
  expect(stop.body).toMatchObject({ owner: { enabled: false, reason: 'rotating', by: `key:${adminKey.id}` } });
  const refused = await call('POST', '/v1/messages', sender.token, mail());
  expect([refused.status, refused.body.error?.code]).toEqual([403, 'key_disabled']);
  // Another tenant's key is not found; a bad body names its field.
  expect((await call('POST', `/v1/keys/${theirs.key.id}/status`, admin, { enabled: false, reason: 'x' })).status).toBe(
    404,
  );
  expect(
    (await call('POST', `/v1/keys/${sender.key.id}/status`, admin, { enabled: 'no', reason: 'x' })).body.error,
  ).toMatchObject({ path: 'enabled' });
  await call('POST', `/v1/keys/${sender.key.id}/status`, admin, { enabled: true, reason: 'done' });
  expect((await call('POST', '/v1/messages', sender.token, mail())).status).toBe(202);

  // The tenant's owner status stops every key of it; the platform's is not the tenant's to set.
  expect((await call('POST', '/v1/tenant/status', admin, { enabled: false, reason: 'audit' })).body).toMatchObject({
    owner: { enabled: false, reason: 'audit' },
  });
  expect((await call('POST', '/v1/messages', sender.token, mail())).body.error?.code).toBe('tenant_disabled');
  expect((await call('POST', '/v1/messages', theirs.token, mail())).status).toBe(202);
  expect((await call('POST', '/v1/tenant/status', sender.token, { enabled: true, reason: 'x' })).body.error?.code).toBe(
    'key_scope',
  );
});
