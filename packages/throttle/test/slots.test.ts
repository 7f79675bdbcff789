import { Redis } from 'ioredis';
import { expect, it } from 'vitest';
import { createSlots } from '@sluice/throttle';
import { useRedisPrefix } from '../../../test/support/redis-prefix.js';

const r = useRedisPrefix();

it('shares a fixed number of connection slots fairly, and a dead holder’s come back', async () => {
  const { redis, keys } = r;
  const common = { key: keys.slots('ses'), holdersKey: keys.slotHolders('ses'), limit: 4, want: 4, leaseMs: 300 };
  const crashing = new Redis(r.url);
  const a = createSlots({ ...common, redis: crashing, holder: 'a' });
  const b = createSlots({ ...common, redis, holder: 'b' });
  await a.start();
  expect(a.held).toBe(4); // alone, it may take every slot
  await b.start();
  // b joins: a gives back down to its fair share on its next renewal, and b tops up.
  await new Promise((r) => setTimeout(r, 250));
  expect([a.held, b.held]).toEqual([2, 2]);
  expect(await redis.zcard(keys.slots('ses'))).toBe(4);

  // a's process dies: nothing renews its leases; they expire and b takes them.
  crashing.disconnect();
  await new Promise((r) => setTimeout(r, 800));
  expect(b.held).toBe(4);

  await b.close();
  expect(await redis.zcard(keys.slots('ses'))).toBe(0);
  await a.close().catch(() => undefined);
});
