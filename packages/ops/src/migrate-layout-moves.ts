import type { Redis } from 'ioredis';
import type { Keys } from '@sluice/core';

// The moves of the key layout's migration (migrate-layout.ts): a scan of one old pattern, each
// key's new name, and a rename that never overwrites. The fleet is stopped and the Redis is a
// single node, so a check before a rename holds until it, and a MULTI may span any keys.

/** The kinds of keys the migration moves, in the order it moves them. */
export const LAYOUT_KINDS = [
  'records',
  'attempts',
  'compactBlocks',
  'goneBitmaps',
  'campaigns',
  'campaignKeys',
  'launches',
  'campaignSets',
  'suppressions',
  'softBounces',
  'mailboxFull',
  'signals',
  'signalIndexes',
  'eventSignals',
  'outcomes',
  'queueKeys',
] as const;

/** A kind of key the migration moves. */
export type LayoutKind = (typeof LAYOUT_KINDS)[number];

/** What one run of the migration did (or, dry, would do). */
export interface MigrationReport {
  /** Nothing was written. */
  dryRun: boolean;
  /** `<prefix>:layout` before the run: null for the old layout, `'2'` once migrated. */
  layoutBefore: string | null;
  /** Old keys moved to their new names (dry: found to move), per kind. */
  moved: Record<LayoutKind, number>;
  /** Every kind's keys together. */
  total: number;
  /** The old names of the BullMQ queues whose keys moved. */
  queues: string[];
  /**
   * ESP event marks dropped (`<prefix>:evt:<provider>:<event>`): the new marks carry the
   * tenant, which the old do not. An ESP's retry of an old event is applied again, which
   * changes nothing (a suppression is written with HSETNX, a soft bounce adds the same member).
   */
  dropped: number;
  /**
   * Old keys left where they are: their new key exists already (`exists`), or their name does
   * not parse as the old layout's (`unparsed`). The layout is not marked `2` while any is left.
   */
  left: { key: string; why: 'exists' | 'unparsed' }[];
}

/** What each step of the migration works with. */
export interface MoveContext {
  redis: Redis;
  keys: Keys;
  prefix: string;
  dryRun: boolean;
  report: MigrationReport;
  log(line: string): void;
}

/** Keys a SCAN asks for at a time, and renames sent in one pipeline. */
export const SCAN_COUNT = 1000;
/** A long kind says how far it got every this many keys. */
const PROGRESS_EVERY = 10_000;

/** `text` as a literal part of a SCAN pattern (a prefix may hold glob characters). */
export function glob(text: string): string {
  return text.replace(/[*?[\]\\]/g, (c) => `\\${c}`);
}

/** The keys matching `pattern`, a SCAN page at a time (never KEYS: the server keeps serving). */
export async function* scanKeys(redis: Redis, pattern: string): AsyncGenerator<string[]> {
  let cursor = '0';
  do {
    const [next, found] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', SCAN_COUNT);
    cursor = next;
    if (found.length > 0) yield found;
  } while (cursor !== '0');
}

/** Adds `n` keys to a kind, and says so every {@link PROGRESS_EVERY}. */
export function count(ctx: MoveContext, kind: LayoutKind, n: number): void {
  const before = ctx.report.moved[kind];
  ctx.report.moved[kind] += n;
  ctx.report.total += n;
  if (Math.floor(before / PROGRESS_EVERY) !== Math.floor(ctx.report.moved[kind] / PROGRESS_EVERY))
    ctx.log(`  ${kind}: ${ctx.report.moved[kind]}…`);
}

/**
 * Renames each old key to its new name unless the new one exists (RENAMENX: a key is never
 * overwritten; a conflict stays listed in `left`). A key a SCAN returned twice is gone the second
 * time and is passed by. Dry, counts the old keys that exist.
 */
export async function movePairs(ctx: MoveContext, kind: LayoutKind, pairs: readonly [string, string][]): Promise<void> {
  if (pairs.length === 0) return;
  const { redis } = ctx;
  const exists = await redis.pipeline(pairs.map(([from]) => ['exists', from])).exec();
  const present = pairs.filter((_, i) => exists?.[i]?.[1] === 1);
  if (ctx.dryRun || present.length === 0) {
    count(ctx, kind, present.length);
    return;
  }
  const renamed = await redis.pipeline(present.map(([from, to]) => ['renamenx', from, to])).exec();
  let moved = 0;
  present.forEach(([from], i) => {
    const [err, done] = renamed?.[i] ?? [null, 0];
    if (err) throw err;
    if (done === 1) moved++;
    else ctx.report.left.push({ key: from, why: 'exists' });
  });
  count(ctx, kind, moved);
}

/**
 * Moves every key matching `pattern` to the name `target` gives it (`undefined`: its name does
 * not parse; it is left and listed).
 */
export async function moveMatching(
  ctx: MoveContext,
  kind: LayoutKind,
  pattern: string,
  target: (key: string) => string | undefined,
): Promise<void> {
  for await (const found of scanKeys(ctx.redis, pattern)) {
    const pairs: [string, string][] = [];
    for (const key of found) {
      const to = target(key);
      if (to === undefined) ctx.report.left.push({ key, why: 'unparsed' });
      else pairs.push([key, to]);
    }
    await movePairs(ctx, kind, pairs);
  }
}

/** Drops every key matching `pattern` (dry: counts them); resolves how many. */
export async function dropMatching(ctx: MoveContext, pattern: string): Promise<number> {
  let n = 0;
  for await (const found of scanKeys(ctx.redis, pattern)) {
    if (ctx.dryRun) n += found.length;
    else n += Number(await ctx.redis.unlink(...found));
  }
  return n;
}

/** The part of `key` after `head`, or `undefined` if it does not start so or nothing follows. */
export function after(key: string, head: string): string | undefined {
  return key.startsWith(head) && key.length > head.length ? key.slice(head.length) : undefined;
}

/** `text` split at its first `:` into two non-empty parts, or `undefined`. */
export function splitFirst(text: string | undefined): [string, string] | undefined {
  const at = text?.indexOf(':') ?? -1;
  if (text === undefined || at <= 0 || at === text.length - 1) return undefined;
  return [text.slice(0, at), text.slice(at + 1)];
}
