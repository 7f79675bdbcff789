import type { Redis } from 'ioredis';
import {
  CAP_WINDOWS,
  SluiceError,
  type CapLimits,
  type CapWindow,
  type Keys,
  type Plan,
  type SluiceConfig,
} from '@sluice/core';

/** What a message counts against: its tenant's and its key's cap counters, with their limits. */
export interface MessageCaps {
  tenant?: { key: string; limits: CapLimits } | undefined;
  key?: { key: string; limits: CapLimits } | undefined;
}

/** Tenants' plans as the config and the tenants' records say (docs/design/tenants-and-keys.md). */
export interface Plans {
  /** The plan of a tenant, if it is on one the config has (read at most once a `ttlMs` per tenant). */
  planOf(tenantId: string): Promise<Plan | undefined>;
  /** The caps a message of `tenantId` sent with key `keyId` counts against; undefined when none. */
  capsOf(tenantId: string, keyId: string | undefined): Promise<MessageCaps | undefined>;
  /**
   * For a plan that refuses at a cap: throws `cap_reached` (with the window's end as
   * `retryAfterMs`) while one of the tenant's or the key's windows is full. A check before
   * acceptance, not the count: admission holds any message that gets past it at the same moment.
   */
  refuseAtCap(tenantId: string, keyId: string | undefined): Promise<void>;
}

/** Options of {@link createPlans}. */
export interface PlansOptions {
  /** The connection of the tenants' records (`redis.queues`). */
  redis: Redis;
  /** The connection of the cap counters (`redis.limiter`). @defaultValue `redis` */
  limiterRedis?: Redis;
  keys: Keys;
  config: Pick<SluiceConfig, 'plans'>;
  /** How long a tenant's plan is kept before it is read again. @defaultValue `1000` */
  ttlMs?: number;
}

const hasCaps = (limits: CapLimits): boolean => CAP_WINDOWS.some((w) => limits[w] !== undefined);

/** The UTC windows of `ms` as admit-n.lua numbers them: index and end (ms). */
export function capWindows(ms: number): Record<CapWindow, { index: number; endMs: number }> {
  const minute = Math.floor(ms / 60_000);
  const hour = Math.floor(ms / 3_600_000);
  const day = Math.floor(ms / 86_400_000);
  const d = new Date(ms);
  return {
    minute: { index: minute, endMs: (minute + 1) * 60_000 },
    hour: { index: hour, endMs: (hour + 1) * 3_600_000 },
    day: { index: day, endMs: (day + 1) * 86_400_000 },
    month: {
      index: d.getUTCFullYear() * 12 + d.getUTCMonth(),
      endMs: Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1),
    },
  };
}

/** A window's count in a counter hash (`<index>:<count>` in the field of its index's parity). */
export function countIn(fields: Record<string, string>, window: CapWindow, index: number): number {
  const letter = window === 'month' ? 'M' : window[0]!;
  const m = /^(\d+):(\d+)$/.exec(fields[`${letter}${index % 2}`] ?? '');
  return m && Number(m[1]) === index ? Number(m[2]) : 0;
}

/** Creates the plans' reader of one process. */
export function createPlans(options: PlansOptions): Plans {
  const { redis, keys, config } = options;
  const counters = options.limiterRedis ?? redis;
  const ttlMs = options.ttlMs ?? 1_000;
  const cache = new Map<string, { plan: Plan | undefined; until: number }>();

  async function planOf(tenantId: string): Promise<Plan | undefined> {
    const now = Date.now();
    const kept = cache.get(tenantId);
    if (kept && kept.until > now) return kept.plan;
    const name = await redis.hget(keys.tenant(tenantId), 'plan');
    const plan = name ? config.plans[name] : undefined;
    cache.set(tenantId, { plan, until: now + ttlMs });
    return plan;
  }

  async function capsOf(tenantId: string, keyId: string | undefined): Promise<MessageCaps | undefined> {
    const plan = await planOf(tenantId);
    if (plan === undefined) return undefined;
    const caps: MessageCaps = {};
    if (hasCaps(plan.caps)) caps.tenant = { key: keys.capCount('tenant', tenantId), limits: plan.caps };
    if (keyId !== undefined && hasCaps(plan.keyCaps))
      caps.key = { key: keys.capCount('key', keyId), limits: plan.keyCaps };
    return caps.tenant || caps.key ? caps : undefined;
  }

  return {
    planOf,
    capsOf,
    async refuseAtCap(tenantId, keyId) {
      const plan = await planOf(tenantId);
      if (plan?.atCap !== 'refuse') return;
      const caps = await capsOf(tenantId, keyId);
      if (caps === undefined) return;
      const windows = capWindows(Date.now());
      for (const [of, counter] of [
        ['tenant', caps.tenant],
        ['key', caps.key],
      ] as const) {
        if (counter === undefined) continue;
        const fields = await counters.hgetall(counter.key);
        for (const window of CAP_WINDOWS) {
          const limit = counter.limits[window];
          const { index, endMs } = windows[window];
          if (limit === undefined || countIn(fields, window, index) < limit) continue;
          const whose = of === 'tenant' ? `tenant ${tenantId}` : `key ${keyId}`;
          throw new SluiceError(
            'cap_reached',
            `${whose} is at its ${window} cap of ${limit} until ${new Date(endMs).toISOString()}`,
            { path: of === 'tenant' ? 'tenantId' : 'key', retryAfterMs: Math.max(1_000, endMs - Date.now()) },
          );
        }
      }
    },
  };
}
