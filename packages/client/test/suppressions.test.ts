import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createClient, type SluiceClient } from '@sluice/client';
import { useRedisPrefix } from '../../../test/support/redis-prefix.js';

const r = useRedisPrefix();
let client: SluiceClient;

beforeEach(() => {
  client = createClient({ redis: r.url, prefix: r.prefix, fleetCheck: 'off' });
});
afterEach(async () => {
  await client.close();
});

describe('client.suppressions', () => {
  it('adds by hand, looks up, lists and removes', async () => {
    expect(await client.suppressions.add('acme', 'Ann@Example.test', 'asked us by phone')).toBe(true);
    expect(await client.suppressions.add('acme', 'ann@example.test', 'again')).toBe(false);
    expect(await client.suppressions.get('acme', 'ANN@example.test')).toMatchObject({
      address: 'ann@example.test',
      source: 'manual',
      reason: 'asked us by phone',
      at: expect.any(Number) as unknown,
    });
    expect(await client.suppressions.get('other', 'ann@example.test')).toBeNull();
    await client.suppressions.add('acme', 'bob@example.test', 'left the company');
    const page = await client.suppressions.list('acme');
    expect(page.cursor).toBe('0');
    expect(page.entries.map((e) => e.address).sort()).toEqual(['ann@example.test', 'bob@example.test']);

    expect(await client.suppressions.remove('acme', 'ann@example.test')).toBe(true);
    expect(await client.suppressions.remove('acme', 'ann@example.test')).toBe(false);
    expect(await client.suppressions.get('acme', 'ann@example.test')).toBeNull();
  });

  it('rejects bad input naming the field, and writes nothing', async () => {
    const cases: [Promise<unknown>, string][] = [
      [client.suppressions.add('acme corp', 'a@example.test', 'x'), 'tenantId'],
      [client.suppressions.add('acme', 'not-an-address', 'x'), 'address'],
      [client.suppressions.add('acme', 'a@example.test', '  '), 'reason'],
      [client.suppressions.list('acme', { cursor: 'abc' }), 'cursor'],
      [client.suppressions.list('acme', { count: 0 }), 'count'],
      [client.suppressions.get('acme', 42 as never), 'address'],
    ];
    for (const [call, path] of cases) {
      const error = await call.catch((e: unknown) => e);
      expect(error).toMatchObject({ name: 'SluiceError', code: 'invalid_argument', path });
      expect((error as Error).message).toMatch(new RegExp(`^${path}: `));
    }
    expect(await client.suppressions.get('acme', 'a@example.test')).toBeNull();
  });
});
