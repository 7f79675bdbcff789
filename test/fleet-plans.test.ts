import { expect, it } from 'vitest';
import { createKeys } from '@sluice/core';
import { createApiKeys, createStore, createTenants } from '@sluice/store';
import { apiBase, waitFor } from './support/fleet.js';
import { useFleet } from './support/use-fleet.js';

// Plans with hard caps on a running fleet: a tenant at its cap is held (hold) or refused over
// HTTP (refuse); the receiver sees no message past the cap.
const PEPPER = 'fleet-plans-pepper/9xQ2kR7mB4vN1zL6sD3fG8hJ5wT0yE=';
const CAP = 5;
const fleet = useFleet({
  schedulers: 1,
  workers: 1,
  config: {
    api: { port: 0, keys: { pepper: PEPPER } },
    providers: { ses: { kind: 'ses', sandbox: true, rate: 200, burst: 20 } },
    plans: {
      small: { caps: { minute: CAP, day: 1_000 }, atCap: 'hold' },
      strict: { caps: { hour: 1_000 }, keyCaps: { minute: 3 }, atCap: 'refuse' },
    },
  },
  scenario: { default: { latencyMs: 2 } },
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Waits, if need be, until the current UTC minute has at least 10 s left: the test's caps are per minute. */
async function awayFromMinuteEnd(): Promise<void> {
  const left = 60_000 - (Date.now() % 60_000);
  if (left < 10_000) await sleep(left + 500);
}

it('holds mail past a tenant’s minute cap at admission: the receiver gets exactly the cap, the rest are held until the minute ends', async () => {
  const f = fleet();
  const keys = createKeys(f.prefix);
  const tenants = createTenants({ redis: f.redis, keys });
  await tenants.create('acme');
  await tenants.setPlan('acme', 'small', { knownPlans: ['small', 'strict'] });
  await awayFromMinuteEnd();
  const minuteEnd = Math.ceil(Date.now() / 60_000) * 60_000;
  const sent = await f.client.sendBulk(
    Array.from({ length: CAP + 3 }, (_, i) => ({
      from: 'news@acme.test',
      to: `u${i}@example.test`,
      subject: `n${i}`,
      text: 'x',
      tenantId: 'acme',
    })),
  );
  await waitFor(() => f.sandbox.accepted().length >= CAP, 15_000, `${CAP} sent`);
  await sleep(1_500);
  // Exactly the cap reached the receiver; the rest are held, saying why and until when.
  expect(f.sandbox.accepted()).toHaveLength(CAP);
  const records = await Promise.all(sent.map(({ id }) => f.client.messages.status(id)));
  const held = records.filter((rec) => rec?.state !== 'sent');
  expect(held).toHaveLength(3);
  // What `sluice explain` reads.
  const store = createStore({ redis: f.redis, keys });
  for (const rec of held) {
    const inspected = await store.inspect(rec!.id);
    expect(inspected?.held?.reason).toMatch(/^held: tenant acme at its minute cap until /);
    expect(Math.abs((inspected?.held?.untilMs ?? 0) - minuteEnd)).toBeLessThan(2_000);
  }
});

it('refuses new mail over HTTP with 429 cap_reached once a key is at its cap on a plan that refuses', async () => {
  const f = fleet();
  const api = await f.startApp('api');
  const keys = createKeys(f.prefix);
  const tenants = createTenants({ redis: f.redis, keys });
  await tenants.create('strict');
  await tenants.setPlan('strict', 'strict');
  const { token } = await createApiKeys({ redis: f.redis, keys, pepper: PEPPER }).create('strict', {
    scopes: ['messages:send'],
  });
  await awayFromMinuteEnd();
  const post = async (i: number) => {
    const res = await fetch(`${apiBase(api)}/v1/messages`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ from: 'a@strict.test', to: `r${i}@example.test`, subject: 's', text: 't' }),
    });
    const body = (await res.json()) as { error?: { code: string; path?: string; message: string } };
    return { status: res.status, retryAfter: res.headers.get('retry-after'), body };
  };
  for (let i = 0; i < 3; i++) expect((await post(i)).status).toBe(202);
  // Counted once admitted: then the key's minute is full.
  await waitFor(() => f.sandbox.accepted().filter((m) => m.from.includes('strict.test')).length >= 3, 15_000, '3 sent');
  const refused = await post(3);
  expect([refused.status, refused.body.error?.code, refused.body.error?.path]).toEqual([429, 'cap_reached', 'key']);
  const left = Math.ceil((60_000 - (Date.now() % 60_000)) / 1000);
  expect(Math.abs(Number(refused.retryAfter) - left)).toBeLessThanOrEqual(2);
  expect(refused.body.error?.message).toMatch(/at its minute cap of 3 until/);
});
