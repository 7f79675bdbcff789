import { afterEach, beforeEach, expect, it } from 'vitest';
import { createClient, type SluiceClient } from '@sluice/client';
import { useRedisPrefix } from '../../../test/support/redis-prefix.js';

// A backend following outcomes through the client: subscribe once, read, handle, ack; a
// restart under the same consumer name gets what it had not acknowledged.

const r = useRedisPrefix();
let client: SluiceClient;

beforeEach(() => {
  client = createClient({
    redis: r.url,
    prefix: r.prefix,
    fleetCheck: 'off',
    outcomes: { claimIdleMs: 100, maxBacklog: 10 },
  });
});
afterEach(async () => {
  await client.close();
});

const message = (to: string) => ({ from: 'hello@acme.test', to, subject: 'Hi', text: 'Hello', tenantId: 'acme' });

it('a backend reads every outcome, blocking for the next, and resumes after a crash', async () => {
  expect(await client.outcomes.subscribe('crm')).toEqual({ created: true });
  const [a, b] = await client.sendBulk([message('a@example.test'), message('b@example.test')]);
  // A blocking read waits for the next event: cancelling `a` publishes it.
  const waiting = client.outcomes.read('crm', 'worker-1', { blockMs: 3_000 });
  await new Promise((done) => setTimeout(done, 100));
  expect(await client.messages.cancel(a!.id)).toBe(true);
  const [first] = await waiting;
  expect(first).toMatchObject({ messageId: a!.id, state: 'cancelled', tenantId: 'acme' });

  // worker-1 dies before acknowledging: restarted, it gets the event again.
  expect((await client.outcomes.read('crm', 'worker-1')).map((e) => e.id)).toEqual([first!.id]);
  await client.outcomes.ack('crm', [first!.id]);
  await client.messages.cancel(b!.id);
  expect(await client.outcomes.backlog()).toBe(2);
  expect(client.outcomes.maxBacklog).toBe(10);
  const [second] = await client.outcomes.read('crm', 'worker-1');
  expect(second).toMatchObject({ messageId: b!.id, state: 'cancelled' });
  expect(await client.outcomes.read('crm', 'worker-1', { blockMs: 50 })).toHaveLength(1);
  await client.outcomes.ack('crm', [second!.id]);
  expect(await client.outcomes.read('crm', 'worker-1', { blockMs: 50 })).toEqual([]);
});

it('names an unknown group and a bad option', async () => {
  await expect(client.outcomes.read('nobody', 'w')).rejects.toMatchObject({ code: 'unknown_group' });
  await expect(client.outcomes.read('nobody', 'w', { blockMs: -1 })).rejects.toMatchObject({
    code: 'invalid_argument',
    path: 'blockMs',
  });
  expect(() => createClient({ redis: r.url, outcomes: { maxBacklog: 0 } })).toThrow(/outcomes\.maxBacklog/);
});
