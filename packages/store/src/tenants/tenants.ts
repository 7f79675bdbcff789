import type { Redis } from 'ioredis';
import { SluiceError, type Clock, type Keys } from '@sluice/core';
import { appendAudit, readAudit, type TenantAuditEntry } from './audit.js';
import { STATUS_PARTIES, TENANT_ID, decodeTenant, encodeStatus, type StatusParty, type TenantRecord } from './codec.js';

/** Options of {@link createTenants}. */
export interface TenantsOptions {
  /** A connection of the caller's to the queues' Redis (`redis.queues`); not closed here. */
  redis: Redis;
  keys: Keys;
  /** @defaultValue `Date.now` */
  clock?: Clock;
}

/** A status change. */
export interface StatusChange {
  party: StatusParty;
  enabled: boolean;
  /** Why (kept on the record and in the audit trail). */
  reason: string;
  /** Who. @defaultValue `'cli'` */
  actor?: string;
}

/** Tenants: their records, their two statuses, their audit trails (docs/design/tenants-and-keys.md). */
export interface Tenants {
  /** Creates a tenant, enabled by both parties, on no plan; an existing one is returned as it is. */
  create(id: string, options?: { actor?: string }): Promise<{ tenant: TenantRecord; created: boolean }>;
  /**
   * Puts a tenant on a plan (`undefined`: none, no caps), audited. The plan must be one of the
   * config's `plans` (`knownPlans`), else `invalid_argument` on `plan`.
   */
  setPlan(
    id: string,
    plan: string | undefined,
    options?: { actor?: string; knownPlans?: readonly string[] },
  ): Promise<TenantRecord>;
  /** A tenant's record, or undefined. */
  get(id: string): Promise<TenantRecord | undefined>;
  /** Every tenant with a record, by id. */
  list(): Promise<TenantRecord[]>;
  /** Sets one party's status; throws `unknown_tenant` for a tenant without a record. */
  setStatus(id: string, change: StatusChange): Promise<TenantRecord>;
  /** The tenant's audit trail, newest first. @defaultValue `count` 100 */
  audit(id: string, count?: number): Promise<TenantAuditEntry[]>;
}

/** Throws `invalid_argument` unless `id` is a tenant id. */
export function checkTenantId(id: string, path = 'tenant'): void {
  if (!TENANT_ID.test(id))
    throw new SluiceError('invalid_argument', `${path}: must match [A-Za-z0-9_-]{1,64}`, { path });
}

/**
 * Sets one party's status on a tenant's or a key's hash (`where.hash`) and writes its audit entry
 * (`tenant.status`, or `key.status` when `where.key` names the key), in one MULTI.
 */
export async function writeStatus(
  redis: Redis,
  keys: Keys,
  where: { hash: string; tenant: string; key: string | undefined },
  change: StatusChange,
  now: number,
): Promise<void> {
  if (!(STATUS_PARTIES as readonly string[]).includes(change.party)) {
    throw new SluiceError('invalid_argument', `party: must be one of ${STATUS_PARTIES.join(', ')}`, { path: 'party' });
  }
  const actor = change.actor ?? 'cli';
  const status = { enabled: change.enabled, reason: change.reason.slice(0, 500), at: now, by: actor };
  const tx = redis.multi();
  tx.hset(where.hash, encodeStatus(change.party, status));
  appendAudit(tx, keys.tenantAudit(where.tenant), now, {
    kind: where.key === undefined ? 'tenant.status' : 'key.status',
    actor,
    key: where.key,
    detail: `${change.party} ${change.enabled ? 'enabled' : 'disabled'}: ${status.reason}`,
    source: undefined,
  });
  await tx.exec();
}

/** `name` if it may name a plan, else `invalid_argument` on `plan`. */
function checkPlanName(name: string): string {
  if (!TENANT_ID.test(name))
    throw new SluiceError('invalid_argument', 'plan: must match [A-Za-z0-9_-]{1,64}', { path: 'plan' });
  return name;
}

/** Reads a tenant's record. */
export async function readTenant(redis: Redis, keys: Keys, id: string): Promise<TenantRecord | undefined> {
  return decodeTenant(id, await redis.hgetall(keys.tenant(id)));
}

/** The tenants of a fleet. */
export function createTenants(options: TenantsOptions): Tenants {
  const { redis, keys } = options;
  const clock = options.clock ?? Date.now;

  async function mustExist(id: string): Promise<TenantRecord> {
    checkTenantId(id);
    const tenant = await readTenant(redis, keys, id);
    if (tenant === undefined) throw new SluiceError('unknown_tenant', `no tenant ${id}`, { path: 'tenant' });
    return tenant;
  }

  return {
    async create(id, opts = {}) {
      checkTenantId(id);
      // Listed first: a crash before the record leaves a listed id without one, which
      // `list` skips and the next create completes.
      await redis.sadd(keys.tenants(), id);
      const now = clock();
      const isNew = await redis.hsetnx(keys.tenant(id), 'createdAt', String(now));
      if (isNew === 1) {
        const audit = redis.multi();
        appendAudit(audit, keys.tenantAudit(id), now, {
          kind: 'tenant.created',
          actor: opts.actor ?? 'cli',
          key: undefined,
          detail: '',
          source: undefined,
        });
        await audit.exec();
      }
      return { tenant: (await readTenant(redis, keys, id))!, created: isNew === 1 };
    },
    get: async (id) => (TENANT_ID.test(id) ? readTenant(redis, keys, id) : undefined),
    async list() {
      const ids = (await redis.smembers(keys.tenants())).sort();
      const records = await Promise.all(ids.map((id) => readTenant(redis, keys, id)));
      return records.filter((r): r is TenantRecord => r !== undefined);
    },
    async setStatus(id, change) {
      await mustExist(id);
      await writeStatus(redis, keys, { hash: keys.tenant(id), tenant: id, key: undefined }, change, clock());
      return mustExist(id);
    },
    async setPlan(id, plan, opts = {}) {
      await mustExist(id);
      if (plan !== undefined) {
        checkPlanName(plan);
        if (opts.knownPlans !== undefined && !opts.knownPlans.includes(plan)) {
          const known = opts.knownPlans.length > 0 ? opts.knownPlans.join(', ') : 'none configured';
          throw new SluiceError('invalid_argument', `plan: no plan ${plan} in the config's plans (${known})`, {
            path: 'plan',
          });
        }
      }
      const now = clock();
      const actor = opts.actor ?? 'cli';
      const tx = redis.multi();
      if (plan === undefined) tx.hdel(keys.tenant(id), 'plan');
      else tx.hset(keys.tenant(id), 'plan', plan);
      appendAudit(tx, keys.tenantAudit(id), now, {
        kind: 'tenant.plan',
        actor,
        key: undefined,
        detail: plan === undefined ? 'no plan' : `plan ${plan}`,
        source: undefined,
      });
      await tx.exec();
      return mustExist(id);
    },
    async audit(id, count = 100) {
      checkTenantId(id);
      return readAudit(redis, keys.tenantAudit(id), count);
    },
  };
}

/** Why a tenant (or a key) does not send now (`owner disabled it: …`), or undefined when both parties let it. */
export function tenantStopped(tenant: Pick<TenantRecord, 'owner' | 'platform'>): string | undefined {
  for (const party of STATUS_PARTIES) {
    const s = tenant[party];
    if (!s.enabled) return `${party} disabled it${s.reason ? `: ${s.reason}` : ''}`;
  }
  return undefined;
}
