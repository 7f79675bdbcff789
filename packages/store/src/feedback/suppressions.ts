import type { Redis } from 'ioredis';
import type { Keys } from '@sluice/core';

/**
 * Why an address is suppressed: `bounce` (an ESP's hard bounce), `complaint` (a spam
 * report), `unsubscribe` (through the ESP), `soft-bounces` (too many in the window),
 * `reply` (a worker's own permanent rejection, such as 550 5.1.1), `mailbox-full` (a full
 * mailbox answered with a 5xx, too often in the window), `manual` (added by hand).
 */
export const SUPPRESSION_SOURCES = [
  'bounce',
  'complaint',
  'unsubscribe',
  'soft-bounces',
  'reply',
  'mailbox-full',
  'manual',
] as const;
/** One of {@link SUPPRESSION_SOURCES}. */
export type SuppressionSource = (typeof SUPPRESSION_SOURCES)[number];

/** One suppressed address of a tenant. */
export interface SuppressionEntry {
  /** Lower-cased. */
  address: string;
  source: SuppressionSource;
  /** The ESP or provider it came from, when one did. */
  provider: string | undefined;
  /** When it was suppressed, epoch ms (undefined for entries written before this was kept). */
  at: number | undefined;
  /** The diagnostic: the receiver's reply, the ESP's reason, or the caller's words. */
  reason: string;
}

/** Reasons are cut here: a tenant can hold millions of entries, and the first words say why. */
const REASON_MAX = 200;
const ENTRY = new RegExp(`^(${SUPPRESSION_SOURCES.join('|')})\\|(\\d+)\\|([^|]*)\\|([\\s\\S]*)$`);

/**
 * The hash value of a suppression: `source|at|provider|reason`, short and readable in
 * `redis-cli`. The field is the address, so the scheduler's check stays one HGET.
 */
export function encodeSuppression(entry: Omit<SuppressionEntry, 'address'>): string {
  const provider = (entry.provider ?? '').replace(/\|/g, '');
  return `${entry.source}|${entry.at ?? 0}|${provider}|${entry.reason.slice(0, REASON_MAX)}`;
}

/** Reads a hash value; a value from before this format was the reason alone, written by `finalize`. */
export function decodeSuppression(address: string, value: string): SuppressionEntry {
  const m = ENTRY.exec(value);
  if (!m) return { address, source: 'reply', provider: undefined, at: undefined, reason: value };
  return {
    address,
    source: m[1] as SuppressionSource,
    at: Number(m[2]) || undefined,
    provider: m[3] || undefined,
    reason: m[4]!,
  };
}

/** What `suppressed()` and `peek()` answer: one line saying why (`bounce: smtp; 550 5.1.1 …`). */
export function suppressionReason(value: string | null): string | null {
  if (value === null) return null;
  const e = decodeSuppression('', value);
  return `${e.source}: ${e.reason}`;
}

/** A page of a tenant's suppressions. */
export interface SuppressionPage {
  entries: SuppressionEntry[];
  /** Pass it back for the next page; `'0'` when the list is done (HSCAN's cursor). */
  cursor: string;
}

/** A tenant's suppression list: list, look up, add and remove. */
export interface Suppressions {
  /** A page of entries (HSCAN: a page may be short or empty before the end; stop at cursor `'0'`). */
  list(tenantId: string, options?: { cursor?: string; count?: number }): Promise<SuppressionPage>;
  get(tenantId: string, address: string): Promise<SuppressionEntry | null>;
  /** Suppresses an address; `false` if it was already (the first entry is kept). */
  add(tenantId: string, address: string, entry: Omit<SuppressionEntry, 'address'>): Promise<boolean>;
  /** Lifts a suppression; `false` if there was none. Its soft-bounce count goes with it. */
  remove(tenantId: string, address: string): Promise<boolean>;
}

/** Options of {@link createSuppressions}. */
export interface SuppressionsOptions {
  /** A connection of the caller's; not closed here. */
  redis: Redis;
  keys: Keys;
}

/** The suppression list of every tenant, in the hashes the scheduler reads (`keys.suppression`). */
export function createSuppressions(options: SuppressionsOptions): Suppressions {
  const { redis, keys } = options;
  return {
    async list(tenantId, opts = {}) {
      const [cursor, flat] = await redis.hscan(
        keys.suppression(tenantId),
        opts.cursor ?? '0',
        'COUNT',
        opts.count ?? 100,
      );
      const entries: SuppressionEntry[] = [];
      for (let i = 0; i + 1 < flat.length; i += 2) entries.push(decodeSuppression(flat[i]!, flat[i + 1]!));
      return { entries, cursor };
    },
    async get(tenantId, address) {
      const a = address.toLowerCase();
      const value = await redis.hget(keys.suppression(tenantId), a);
      return value === null ? null : decodeSuppression(a, value);
    },
    async add(tenantId, address, entry) {
      return (await redis.hsetnx(keys.suppression(tenantId), address.toLowerCase(), encodeSuppression(entry))) === 1;
    },
    async remove(tenantId, address) {
      const a = address.toLowerCase();
      const [[, removed] = [null, 0]] =
        (await redis.multi().hdel(keys.suppression(tenantId), a).del(keys.softBounces(tenantId, a)).exec()) ?? [];
      return removed === 1;
    },
  };
}
