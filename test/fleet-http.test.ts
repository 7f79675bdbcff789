import { expect, it } from 'vitest';
import { createKeys } from '@sluice/core';
import { createApiKeys, createTenants } from '@sluice/store';
import { apiBase, waitFor } from './support/fleet.js';
import { useFleet } from './support/use-fleet.js';

// The HTTP API as a backend in another language drives it: plain fetch, no SDK, against a
// running fleet (scheduler, worker, api) and the sandbox ESP.
const PEPPER = 'fleet-http-pepper/4kQ9zR2mX7vB1nL8sD5fG3hJ6wT0yE=';
const RECEIVER_RATE = 40;
const fleet = useFleet({
  schedulers: 1,
  workers: 1,
  config: {
    api: { port: 0, keys: { pepper: PEPPER } },
    // A window of a few dozen recipients: the stream meets it within the first second.
    injection: { aheadMs: 500, minWindow: 20, maxWindow: 60 },
    providers: { ses: { kind: 'ses', sandbox: true, rate: 500, burst: 50 } },
    defaults: { campaign: { rate: 1_000 } },
    organisations: { builtIn: false },
    receivers: [{ name: 'slow', domains: ['slow.test'], rate: RECEIVER_RATE, burst: 5 }],
  },
  scenario: { default: { latencyMs: 2 } },
});

/** The fields of the answers this test reads. */
interface Body {
  error?: { code: string; path?: string };
  cursor: { position: number };
  decision?: { kind: string };
  window?: { max: number };
  [field: string]: unknown;
}

interface Answer {
  status: number;
  headers: Headers;
  body: Body;
}

function caller(base: string, token: string) {
  return async (method: string, path: string, body?: unknown, type = 'application/json'): Promise<Answer> => {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body !== undefined ? { 'content-type': type } : {}) },
      ...(body !== undefined ? { body: typeof body === 'string' ? body : JSON.stringify(body) } : {}),
    });
    return { status: res.status, headers: res.headers, body: (await res.json()) as Body };
  };
}

const ndjson = (lines: readonly unknown[]): string => lines.map((l) => JSON.stringify(l)).join('\n') + '\n';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

it('streams a campaign of NDJSON recipients with backpressure (429, Retry-After, cursor), resumed to the end, each sent once and its outcome read over HTTP', async () => {
  const f = fleet();
  const api = await f.startApp('api');
  const keys = createKeys(f.prefix);
  await createTenants({ redis: f.redis, keys }).create('acme');
  const { token } = await createApiKeys({ redis: f.redis, keys, pepper: PEPPER }).create('acme', {
    scopes: ['campaigns:write', 'read', 'outcomes:read'],
  });
  const call = caller(apiBase(api), token);
  const count = 240;
  const recipients = Array.from({ length: count }, (_, i) => ({ to: `u${i}@slow.test`, data: { n: i } }));

  expect(
    (
      await call('POST', '/v1/campaigns', {
        id: 'spring',
        priority: 'low',
        content: { from: 'news@acme.test', subject: 'Spring {{n}}', text: 'Hello {{n}}' },
      })
    ).status,
  ).toBe(201);
  // Not launched yet: refused, nothing written.
  const early = await call('POST', '/v1/campaigns/spring/recipients', ndjson(recipients), 'application/x-ndjson');
  expect([early.status, early.body.error?.code]).toEqual([409, 'campaign_not_launched']);
  const launch = await call('POST', '/v1/campaigns/spring/launch', { total: count, domains: { 'slow.test': count } });
  expect([launch.status, launch.body.decision?.kind]).toEqual([200, 'accept']);

  expect((await call('POST', '/v1/outcomes/groups', { name: 'crm' })).status).toBe(201);
  // The scheduler writes the campaign's window once it polls it: until then the defaults apply.
  await waitFor(async () => (await call('GET', '/v1/campaigns/spring')).body.window?.max === 60, 10_000, 'window');

  // The whole list each time, from the cursor the last answer gave: lines behind it are skipped.
  let from = 0;
  const waits: number[] = [];
  for (let round = 0; round < 60; round++) {
    const res = await call(
      'POST',
      `/v1/campaigns/spring/recipients?from=0&waitMs=300&chunkSize=20`,
      ndjson(recipients),
      'application/x-ndjson',
    );
    if (res.status === 200) {
      expect(res.body).toMatchObject({ cursor: { position: count }, accepted: count - from, skipped: from });
      from = count;
      break;
    }
    expect([res.status, res.body.error?.code]).toEqual([429, 'injection_waiting']);
    const retryAfter = Number(res.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(res.body.cursor.position).toBeGreaterThanOrEqual(from);
    from = res.body.cursor.position;
    waits.push(retryAfter);
    // A patient client waits as told; this one comes back sooner, to keep the test short.
    await sleep(300);
  }
  expect(from).toBe(count);
  // The window held the stream back: it was answered 429 at least once before the end.
  expect(waits.length).toBeGreaterThan(0);

  const arrived = () => f.sandbox.accepted().flatMap((m) => m.to);
  await waitFor(() => arrived().length >= count, 30_000, `${count} sent`);
  await sleep(500);
  const sent = arrived();
  expect(sent).toHaveLength(count);
  expect(new Set(sent).size).toBe(count);
  const status = await call('GET', '/v1/campaigns/spring');
  expect(status.body).toMatchObject({ cursor: { position: count } });

  // Every recipient's outcome, read over HTTP and acknowledged: each once, sent.
  const outcomes = new Map<string, string>();
  await waitFor(
    async () => {
      const read = await call('POST', '/v1/outcomes/groups/crm/read', { consumer: 'c1', count: 100, waitMs: 500 });
      const events = read.body.events as { id: string; messageId: string; state: string }[];
      for (const e of events) if (e.state !== 'deferred') outcomes.set(e.messageId, e.state);
      await call('POST', '/v1/outcomes/groups/crm/ack', { ids: events.map((e) => e.id) });
      return outcomes.size >= count;
    },
    30_000,
    'every outcome over HTTP',
  );
  expect([...outcomes.values()].every((state) => state === 'sent')).toBe(true);

  // A bad line stops the stream there, naming its position; the lines before it are written.
  await call('POST', '/v1/campaigns', { id: 'fix', content: { from: 'news@acme.test', subject: 'Fix', text: 'x' } });
  await call('POST', '/v1/campaigns/fix/launch', { total: 3, domains: { 'slow.test': 3 } });
  const body = `{"to":"a@slow.test"}\n{oops\n{"to":"b@slow.test"}\n`;
  const bad = await call('POST', '/v1/campaigns/fix/recipients', body, 'application/x-ndjson');
  expect([bad.status, bad.body.error?.code, bad.body.error?.path]).toEqual([400, 'invalid_recipient', 'recipients.1']);
  expect(bad.body.cursor).toEqual({ position: 1 });
  const wrong = await call('POST', '/v1/campaigns/fix/recipients?from=1', '{"to":"nobody"}\n', 'application/x-ndjson');
  expect([wrong.status, wrong.body.error?.path]).toEqual([400, 'recipients.1.to']);
  const json = await call('POST', '/v1/campaigns/fix/recipients?from=1', [{ to: 'b@slow.test' }]);
  expect([json.status, json.body.error?.path]).toEqual([400, 'content-type']);
  expect((await call('GET', '/v1/campaigns/fix')).body).toMatchObject({
    cursor: { position: 1 },
    counts: { accepted: 1 },
  });

  console.log(`${count} recipients over HTTP in ${waits.length + 1} requests; Retry-After said ${waits.join(', ')} s`);
});
