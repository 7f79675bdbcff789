import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { createKeys } from '@sluice/core';
import { createSlots } from '@sluice/throttle';

let redis: Redis;
beforeAll(() => {
  redis = new Redis(inject('redisUrl'));
});
afterAll(async () => {
  await redis.quit();
});

it('shares a fixed number of connection slots across holders, and a dead holder’s come back', async () => {
  const key = createKeys(`t-${randomUUID().slice(0, 8)}`).slots('ses');
  const crashing = new Redis(inject('redisUrl'));
  const a = createSlots({ redis: crashing, key, limit: 3, holder: 'a', want: 2, leaseMs: 300 });
  const b = createSlots({ redis, key, limit: 3, holder: 'b', want: 2, leaseMs: 300 });
  await a.start();
  await b.start();
  expect([a.held, b.held]).toEqual([2, 1]);

  // a's process dies: its connection goes and nothing renews its leases.
  crashing.disconnect();
  await new Promise((r) => setTimeout(r, 700));
  expect(b.held).toBe(2);
  expect(await redis.zcard(key)).toBe(2);

  await b.close();
  expect(await redis.zcard(key)).toBe(0);
  await a.close().catch(() => undefined);
});
