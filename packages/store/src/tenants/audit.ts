import type { ChainableCommander, Redis } from 'ioredis';
import type { Clock, Keys } from '@sluice/core';

/** A tenant's audit stream is capped near this many entries (approximately: `MAXLEN ~`). */
export const TENANT_AUDIT_MAXLEN = 10_000;
/** An auth failure of one key and reason is written at most once in this many ms, with a count. */
export const FAILURE_EVERY_MS = 1_000;

/** What happened. */
export type TenantAuditKind =
  | 'tenant.created'
  | 'tenant.status'
  | 'tenant.plan'
  | 'key.created'
  | 'key.rotated'
  | 'key.revoked'
  | 'key.status'
  | 'auth.failed';

/** One entry of a tenant's audit trail (or of the fleet's, for keys of no known tenant). */
export interface TenantAuditEntry {
  /** The stream entry id. */
  id: string;
  at: number;
  kind: TenantAuditKind;
  /** Who did it: an actor name, or `key:<id>` for a request made with a key. */
  actor: string;
  /** The key it is about, if any. */
  key: string | undefined;
  /** For `auth.failed`: the error code; for a status: `owner`/`platform` and its new value. */
  detail: string;
  /** The address a request came from, when it came over HTTP. */
  source: string | undefined;
  /** For `auth.failed`: how many failures this entry stands for (the first and those held back). */
  count: number;
}

/** An entry to append (its id and time are the stream's). */
export type TenantAuditInput = Omit<TenantAuditEntry, 'id' | 'at' | 'count'> & { count?: number };

/** Appends an entry to `stream` within a transaction of the caller's (the change it records). */
export function appendAudit(tx: ChainableCommander, stream: string, at: number, entry: TenantAuditInput): void {
  tx.xadd(
    stream,
    'MAXLEN',
    '~',
    TENANT_AUDIT_MAXLEN,
    '*',
    'at',
    String(at),
    'kind',
    entry.kind,
    'actor',
    entry.actor,
    'key',
    entry.key ?? '',
    'detail',
    entry.detail,
    'source',
    entry.source ?? '',
    'count',
    String(entry.count ?? 1),
  );
}

/** Reads a stream's entries, newest first. */
export async function readAudit(redis: Redis, stream: string, count: number): Promise<TenantAuditEntry[]> {
  const rows = (await redis.xrevrange(stream, '+', '-', 'COUNT', count)) as [string, string[]][];
  return rows.map(([id, flat]) => {
    const f: Record<string, string> = {};
    for (let i = 0; i + 1 < flat.length; i += 2) f[flat[i]!] = flat[i + 1]!;
    return {
      id,
      at: Number(f.at ?? 0),
      kind: (f.kind ?? 'auth.failed') as TenantAuditKind,
      actor: f.actor ?? '',
      key: f.key || undefined,
      detail: f.detail ?? '',
      source: f.source || undefined,
      count: Number(f.count ?? 1),
    };
  });
}

/**
 * Writes auth failures, at most one entry a second per stream, key and code: a flood of bad
 * requests costs one entry a second, whose `count` says how many it stands for. Kept per
 * process; a process that ends drops at most the last second's count.
 */
export function createFailureLog(redis: Redis, keys: Keys, clock: Clock) {
  const held = new Map<string, { until: number; count: number }>();
  return async function failed(
    tenant: string | undefined,
    entry: Required<Pick<TenantAuditInput, 'detail'>> & Pick<TenantAuditInput, 'key' | 'source'>,
  ): Promise<void> {
    const now = clock();
    const stream = tenant === undefined ? keys.apiAudit() : keys.tenantAudit(tenant);
    const name = `${stream}|${entry.key ?? ''}|${entry.detail}`;
    const last = held.get(name);
    if (last !== undefined && now < last.until) {
      last.count++;
      return;
    }
    held.set(name, { until: now + FAILURE_EVERY_MS, count: 0 });
    if (held.size > 10_000) for (const [n, h] of held) if (h.until <= now) held.delete(n);
    const tx = redis.multi();
    appendAudit(tx, stream, now, { kind: 'auth.failed', actor: 'http', ...entry, count: 1 + (last?.count ?? 0) });
    await tx.exec();
  };
}
