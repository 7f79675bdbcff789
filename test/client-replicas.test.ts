import { afterAll, beforeAll, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { SluiceError, createKeys } from '@sluice/core';
import { createClient } from '@sluice/client';
import { startRedisServer, type RedisServer } from './support/redis-server.js';
import { waitFor } from './support/fleet.js';

// The client's `replicas` option: a send answers only once a replica has the mail (Redis WAIT),
// so a failover right after the answer cannot lose it. A primary and its replica of our own: the
// replica is frozen to show what a send does when no replica takes the mail in time.

let primary: RedisServer;
let replica: RedisServer;
let onReplica: Redis;

beforeAll(async () => {
  primary = await startRedisServer({ oneSlotCluster: false });
  replica = await startRedisServer({ oneSlotCluster: false });
  onReplica = new Redis(replica.url);
  await onReplica.replicaof('127.0.0.1', primary.port);
  await waitFor(
    async () => ((await onReplica.info('replication')).includes('master_link_status:up') ? true : null),
    10_000,
    'the replica linked',
  );
});

afterAll(async () => {
  onReplica?.disconnect();
  await replica?.stop();
  await primary?.stop();
});

const message = (key: string) => ({
  from: 'Acme <id@acme.test>',
  to: 'someone@example.test',
  subject: 'Your code',
  text: '123456',
  priority: 'critical' as const,
  idempotencyKey: key,
});

it('answers a send once a replica has it, and refuses one no replica took in time, leaving it to a retry', async () => {
  const prefix = 'replicas';
  const keys = createKeys(prefix);
  const client = createClient({
    redis: primary.url,
    prefix,
    fleetCheck: 'off',
    replicas: { count: 1, timeoutMs: 300 },
  });
  try {
    // Answered: the replica has the record already, and the job.
    const sent = await client.send(message('signin-1'));
    expect(await onReplica.exists(keys.message(sent.id))).toBe(1);
    const many = await client.sendBulk(Array.from({ length: 20 }, (_, i) => message(`bulk-${i}`)));
    expect(await Promise.all(many.map((m) => onReplica.exists(keys.message(m.id))))).toEqual(many.map(() => 1));

    // The replica frozen: the send is written on the primary, but not answered as safe.
    await replica.kill('SIGSTOP');
    const started = Date.now();
    const refused = await client.send(message('signin-2')).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(SluiceError);
    expect(refused).toMatchObject({ code: 'redis_unavailable', action: 'transient' });
    expect((refused as Error).message).toMatch(/only 0 of 1 replicas had it within 300 ms/);
    expect(Date.now() - started).toBeLessThan(2_000);

    // Back: the retry with the same key is the same message, not a second one.
    await replica.kill('SIGCONT');
    const retried = await client.send(message('signin-2'));
    expect(retried.duplicate).toBe(true);
    expect((await client.messages.status(retried.id))?.state).toBe('queued');
    expect(await onReplica.exists(keys.message(retried.id))).toBe(1);
  } finally {
    await client.close();
  }
});

it('names the option when it is wrong', () => {
  const make = (replicas: unknown, timeoutMs?: number) => () =>
    createClient({
      redis: primary.url,
      fleetCheck: 'off',
      replicas: replicas as never,
      ...(timeoutMs ? { timeoutMs } : {}),
    });
  expect(make({ count: 0 })).toThrow(expect.objectContaining({ code: 'invalid_argument', path: 'replicas.count' }));
  expect(make(2)).toThrow(expect.objectContaining({ code: 'invalid_argument', path: 'replicas' }));
  expect(make({ count: 1, timeoutMs: 5_000 }, 2_000)).toThrow(
    expect.objectContaining({ code: 'invalid_argument', path: 'replicas.timeoutMs' }),
  );
});
