import type { Redis } from 'ioredis';
import { SluiceError, type Keys } from '@sluice/core';
import { createSuppressions, type SuppressionEntry, type SuppressionPage } from '@sluice/store';

/** A tenant's suppression list through the client (the CLI uses the same calls). */
export interface ClientSuppressions {
  /**
   * One page of a tenant's suppressions. Pass the returned `cursor` back for the next; the
   * list is done at cursor `'0'`. A page may be short, even empty, before the end (HSCAN).
   * @param options.count - entries per page, a hint. @defaultValue `100`
   */
  list(tenantId: string, options?: { cursor?: string; count?: number }): Promise<SuppressionPage>;
  /** An address's entry (why, since when, from where), or null if it is not suppressed. */
  get(tenantId: string, address: string): Promise<SuppressionEntry | null>;
  /** Lets mail to the address through again; false if it was not suppressed. */
  remove(tenantId: string, address: string): Promise<boolean>;
  /** Suppresses an address by hand (source `manual`); false if it already was (that entry stays). */
  add(tenantId: string, address: string, reason: string): Promise<boolean>;
}

const NAME = /^[A-Za-z0-9_-]{1,64}$/;
const ADDRESS = /^[^\s@]{1,256}@[^\s@]{1,256}$/;

function invalid(path: string, message: string): SluiceError {
  return new SluiceError('invalid_argument', `${path}: ${message}`, { path });
}

function tenant(value: unknown): string {
  if (typeof value !== 'string' || !NAME.test(value)) throw invalid('tenantId', 'must match [A-Za-z0-9_-]{1,64}');
  return value;
}

function address(value: unknown): string {
  if (typeof value !== 'string' || !ADDRESS.test(value.trim())) throw invalid('address', 'must be an email address');
  return value.trim().toLowerCase();
}

/** The client's `suppressions`: validates, then reads and writes the hashes the scheduler checks. */
export function createClientSuppressions(redis: Redis, keys: Keys, check: () => void): ClientSuppressions {
  const list = createSuppressions({ redis, keys });
  return {
    async list(tenantId, options = {}) {
      check();
      const cursor = options.cursor ?? '0';
      if (typeof cursor !== 'string' || !/^\d{1,20}$/.test(cursor))
        throw invalid('cursor', 'must be a cursor returned by list (digits)');
      const count = options.count ?? 100;
      if (!Number.isInteger(count) || count < 1 || count > 1000)
        throw invalid('count', 'must be an integer from 1 to 1000');
      return list.list(tenant(tenantId), { cursor, count });
    },
    async get(tenantId, to) {
      check();
      return list.get(tenant(tenantId), address(to));
    },
    async remove(tenantId, to) {
      check();
      return list.remove(tenant(tenantId), address(to));
    },
    async add(tenantId, to, reason) {
      check();
      const t = tenant(tenantId);
      const a = address(to);
      if (typeof reason !== 'string' || reason.trim() === '')
        throw invalid('reason', 'must say why (a non-empty string)');
      if (reason.length > 200) throw invalid('reason', 'must be at most 200 characters');
      return list.add(t, a, { source: 'manual', provider: undefined, at: Date.now(), reason: reason.trim() });
    },
  };
}
