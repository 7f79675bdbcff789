import { COMPACT_BLOCK, HOME_COUNT, HOMES, homeOfBlock } from '@sluice/core';
import { after, count, glob, scanKeys, type MoveContext } from './migrate-layout-moves.js';

// The campaign hash and the bitmaps of records gone: the two old keys that split in the new
// layout rather than move whole. The campaign hash's counters go to its part in home 0 and its
// pause flag is copied into every home (the worker's submit reads it there); a bitmap's blocks
// go to their homes. Both are the campaign lifecycle's stored shapes (packages/store/src/
// campaigns/codec.ts, records/compact.ts): the migration names them once, here, to move them.

/** A campaign hash's field: `1` while paused (`CAMPAIGN_FIELDS.paused` in the store's codec). */
const PAUSED = 'paused';
/** Bytes of an old bitmap read at a time: a whole number of blocks (8 bytes each). */
const BITMAP_CHUNK = 64 * 1024;
const BLOCK_BYTES = COMPACT_BLOCK / 8;

/** Whether a campaign hash's field is one of its counters (`n:<state>`, summed over the homes now). */
function isCounter(field: string): boolean {
  // eslint-disable-next-line no-restricted-syntax -- the migration moves the counters out of the old hash
  return field.startsWith('n:');
}

/** The new campaign hash's name (`keys.campaign`): its owner's builder, for the move. */
function campaignKey(ctx: MoveContext, id: string): string {
  // eslint-disable-next-line no-restricted-syntax -- the migration renames the hash, reading no field of it but the counters and the flag
  return ctx.keys.campaign(id);
}

/**
 * Moves every campaign (`<prefix>:campaign:<id>`): its counters to its part in home 0 and out
 * of the old hash in one MULTI with the rename, so a second run finds no counter to add twice;
 * a paused one's flag copied into every home before (idempotent). An archived campaign's TTL
 * goes with the hash (RENAME keeps it) and onto the parts written. Its content and cursor are
 * moved too (`campaignKeys`).
 */
export async function moveCampaigns(ctx: MoveContext): Promise<void> {
  const head = `${ctx.prefix}:campaign:`;
  for await (const found of scanKeys(ctx.redis, `${glob(head)}*`)) {
    for (const key of found) {
      const rest = after(key, head) ?? '';
      const [id, part, extra] = rest.split(':');
      if (!id || extra !== undefined) ctx.report.left.push({ key, why: 'unparsed' });
      else if (part === undefined) await moveCampaign(ctx, key, id);
      else if (part === 'content') await moveOne(ctx, key, ctx.keys.campaignContent(id));
      else if (part === 'cursor') await moveOne(ctx, key, ctx.keys.campaignCursor(id));
      else ctx.report.left.push({ key, why: 'unparsed' });
    }
  }
}

/** One campaign key that moves whole (content, cursor). */
async function moveOne(ctx: MoveContext, from: string, to: string): Promise<void> {
  if ((await ctx.redis.exists(from)) === 0) return;
  if (!ctx.dryRun && (await ctx.redis.renamenx(from, to)) === 0) {
    ctx.report.left.push({ key: from, why: 'exists' });
    return;
  }
  count(ctx, 'campaignKeys', 1);
}

async function moveCampaign(ctx: MoveContext, from: string, id: string): Promise<void> {
  const { redis, keys } = ctx;
  const [fields, ttl] = await Promise.all([redis.hgetall(from), redis.pttl(from)]);
  if (Object.keys(fields).length === 0) return;
  const to = campaignKey(ctx, id);
  if ((await redis.exists(to)) === 1) {
    ctx.report.left.push({ key: from, why: 'exists' });
    return;
  }
  if (ctx.dryRun) return count(ctx, 'campaigns', 1);
  const counters = Object.entries(fields).filter(([field]) => isCounter(field));
  if (fields[PAUSED] === '1') {
    const copies = redis.pipeline();
    for (const h of HOMES) {
      copies.hset(keys.campaignHome(id, h), PAUSED, '1');
      if (ttl > 0) copies.pexpire(keys.campaignHome(id, h), ttl);
    }
    await copies.exec();
  }
  const home = keys.campaignHome(id, 0);
  const multi = redis.multi();
  if (counters.length > 0) {
    multi.hset(home, Object.fromEntries(counters));
    if (ttl > 0) multi.pexpire(home, ttl);
    multi.hdel(from, ...counters.map(([field]) => field));
  }
  // A hash of counters alone (never written so) is empty once they are out: nothing to rename.
  if (counters.length < Object.keys(fields).length) multi.rename(from, to);
  const replies = await multi.exec();
  for (const [err] of replies ?? []) if (err) throw err;
  count(ctx, 'campaigns', 1);
}

/**
 * Moves every bitmap of an injected campaign's records gone (`<prefix>:mgone:<campaign>`, bit =
 * position) into its homes' bitmaps (`keys.goneRecords`, bit = `goneBit(position)`). A block's 64
 * positions are 8 aligned bytes in both, so each block with a bit set is copied whole
 * (SETRANGE: the same bits `goneBit` names, one command a block); the old key goes last, so a
 * run cut off writes the same bytes again. The new bitmaps get the old one's TTL.
 */
export async function moveGoneBitmaps(ctx: MoveContext): Promise<void> {
  const head = `${ctx.prefix}:mgone:`;
  for await (const found of scanKeys(ctx.redis, `${glob(head)}*`)) {
    for (const key of found) {
      const id = after(key, head);
      if (id === undefined || id.includes(':')) ctx.report.left.push({ key, why: 'unparsed' });
      else await moveGoneBitmap(ctx, key, id);
    }
  }
}

async function moveGoneBitmap(ctx: MoveContext, from: string, id: string): Promise<void> {
  const { redis, keys } = ctx;
  const [length, ttl] = await Promise.all([redis.strlen(from), redis.pttl(from)]);
  if (length === 0) return;
  if (ctx.dryRun) return count(ctx, 'goneBitmaps', 1);
  const written = new Set<string>();
  for (let start = 0; start < length; start += BITMAP_CHUNK) {
    const bytes = await redis.getrangeBuffer(from, start, start + BITMAP_CHUNK - 1);
    const writes = redis.pipeline();
    for (let at = 0; at < bytes.length; at += BLOCK_BYTES) {
      const block = bytes.subarray(at, at + BLOCK_BYTES);
      if (block.every((b) => b === 0)) continue;
      const index = (start + at) / BLOCK_BYTES;
      const to = keys.goneRecords(id, homeOfBlock(id, index));
      // goneBit: a home holds every HOME_COUNT-th block of the campaign, side by side.
      writes.setrange(to, Math.floor(index / HOME_COUNT) * BLOCK_BYTES, block);
      written.add(to);
    }
    const replies = await writes.exec();
    for (const [err] of replies ?? []) if (err) throw err;
  }
  const end = redis.multi();
  if (ttl > 0) for (const to of written) end.pexpire(to, ttl);
  end.del(from);
  await end.exec();
  count(ctx, 'goneBitmaps', 1);
}
