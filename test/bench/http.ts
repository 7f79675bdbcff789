import { createKeys } from '@sluice/core';
import { createApiKeys, createTenants } from '@sluice/store';
import { apiBase, startFleet, waitFor } from '../support/fleet.js';
import { sleep, type Row } from './support.js';

/** Figures of the HTTP ingest scenario: messages accepted a second, each way, in one run. */
export interface HttpFigures {
  messages: number;
  /** `POST /v1/messages/batch`, 100 a request, 4 requests in flight. */
  httpBatchPerSec: number;
  /** `client.sendBulk`, 100 a call, 4 calls in flight: the baseline. */
  clientBulkPerSec: number;
  /** `POST /v1/messages`, one a request, 16 in flight. */
  httpOnePerSec: number;
  /** `client.send`, one a call, 16 in flight: the baseline. */
  clientOnePerSec: number;
  /** Every message of the four runs was sent once (the sandbox's count at the end). */
  allSent: boolean;
}

const PEPPER = 'bench-http-pepper/3vK8mQ1zR6xN9bL2sD5fG7hJ4wT0yE=';
const BATCH = 100;

const message = (run: string, i: number) => ({
  from: 'bench@acme.test',
  to: `${run}${i}@d${i % 50}.test`,
  subject: 'bench',
  text: 'hello',
  tenantId: 'acme',
});

/** Runs `total` sends with `inFlight` at once; resolves their rate a second. */
async function rate(total: number, per: number, inFlight: number, send: (from: number, n: number) => Promise<void>) {
  let next = 0;
  const start = Date.now();
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (next < total) {
        const from = next;
        next += per;
        await send(from, Math.min(per, total - from));
      }
    }),
  );
  return total / ((Date.now() - start) / 1000);
}

/**
 * Mail in over HTTP against `@sluice/client` on the same fleet and Redis (issue 34): the api as
 * a process of its own with a key, a backend's `fetch` in this process; the client in this
 * process too. What is measured is acceptance (the 202, the client's resolve), the part the
 * ingest adds; the fleet sends everything afterwards, and the sandbox's count checks it.
 */
export async function benchHttp(redisUrl: string, messages: number): Promise<HttpFigures> {
  const fleet = await startFleet({
    redisUrl,
    schedulers: 1,
    workers: 1,
    config: {
      api: { port: 0, keys: { pepper: PEPPER } },
      providers: { ses: { kind: 'ses', sandbox: true, rate: 1_000_000, burst: 100_000, concurrency: 64 } },
    },
  });
  try {
    const api = await fleet.startApp('api');
    const base = apiBase(api);
    const keys = createKeys(fleet.prefix);
    await createTenants({ redis: fleet.redis, keys }).create('acme');
    const { token } = await createApiKeys({ redis: fleet.redis, keys, pepper: PEPPER }).create('acme', {
      scopes: ['messages:send'],
    });
    const post = async (path: string, body: unknown, expected: number): Promise<void> => {
      const res = await fetch(`${base}${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      if (res.status !== expected) throw new Error(`${path}: ${res.status} ${await res.text()}`);
      await res.arrayBuffer();
    };
    const list = (run: string, from: number, n: number) => Array.from({ length: n }, (_, k) => message(run, from + k));
    const before = fleet.sandbox.stats().accepted;

    const httpBatchPerSec = await rate(messages, BATCH, 4, (from, n) =>
      post('/v1/messages/batch', { messages: list('hb', from, n) }, 202),
    );
    const clientBulkPerSec = await rate(messages, BATCH, 4, async (from, n) => {
      await fleet.client.sendBulk(list('cb', from, n));
    });
    const single = Math.max(200, Math.round(messages / 5));
    const httpOnePerSec = await rate(single, 1, 16, (from) => post('/v1/messages', message('h1', from), 202));
    const clientOnePerSec = await rate(single, 1, 16, async (from) => {
      await fleet.client.send(message('c1', from));
    });
    const total = 2 * messages + 2 * single;
    await waitFor(() => fleet.sandbox.stats().accepted >= before + total, 120_000, `${total} sent`);
    await sleep(500);
    return {
      messages,
      httpBatchPerSec,
      clientBulkPerSec,
      httpOnePerSec,
      clientOnePerSec,
      allSent: fleet.sandbox.stats().accepted === before + total,
    };
  } finally {
    await fleet.stop();
  }
}

export const httpResults = (h: HttpFigures) => ({
  messages: h.messages,
  httpBatchPerSec: Math.round(h.httpBatchPerSec),
  clientBulkPerSec: Math.round(h.clientBulkPerSec),
  batchRatio: Number((h.httpBatchPerSec / h.clientBulkPerSec).toFixed(2)),
  httpOnePerSec: Math.round(h.httpOnePerSec),
  clientOnePerSec: Math.round(h.clientOnePerSec),
  oneRatio: Number((h.httpOnePerSec / h.clientOnePerSec).toFixed(2)),
  allSent: h.allSent,
});

export function httpRows(h: HttpFigures): Row[] {
  const perSec = (n: number): string => `${Math.round(n).toLocaleString('en-US')}/s`;
  return [
    [
      'http: accepted, batches of 100 (4 in flight)',
      perSec(h.httpBatchPerSec),
      `${perSec(h.clientBulkPerSec)} (client sendBulk)`,
      `${(h.httpBatchPerSec / h.clientBulkPerSec).toFixed(2)}×`,
      'context',
    ],
    [
      'http: accepted, one a request (16 in flight)',
      perSec(h.httpOnePerSec),
      `${perSec(h.clientOnePerSec)} (client send)`,
      `${(h.httpOnePerSec / h.clientOnePerSec).toFixed(2)}×`,
      'context',
    ],
    ['http: every message sent once', h.allSent ? 'yes' : 'NO', '', '', 'yes'],
  ];
}
