import type { Redis } from 'ioredis';
import { COMPACT_BLOCK, goneBit, homeOf, parseInjectedId, type Keys, type MessageState } from '@sluice/core';
import { CAMPAIGN_FLAGS } from '../campaigns/codec.js';
import { readCampaignFields } from '../campaigns/read.js';
import type { MessageRecord } from './message-record.js';

/**
 * Positions per block of compact records (`COMPACT_BLOCK` in core, part of the key layout): two
 * fields each, 128 in all, which is Redis' `hash-max-listpack-entries`, so a block stays a
 * listpack (a few bytes an entry).
 */
export { COMPACT_BLOCK };

/**
 * Where an injected message's compact record lives (its block and field) and its bit in its
 * home's bitmap of its campaign's records gone; `undefined` for other ids (and positions past
 * 2³², a bitmap's end).
 */
export function compactSlot(
  keys: Keys,
  id: string,
): { key: string; field: string; slot: number; gone: string; bit: number } | undefined {
  const parsed = parseInjectedId(id);
  if (!parsed || parsed.position >= 2 ** 32) return undefined;
  const slot = parsed.position % COMPACT_BLOCK;
  return {
    key: keys.compactRecords(parsed.campaignId, Math.floor(parsed.position / COMPACT_BLOCK)),
    field: String(slot * 2),
    slot,
    gone: keys.goneRecords(parsed.campaignId, homeOf(id)),
    bit: goneBit(parsed.position),
  };
}

/**
 * The keys and arguments of the `retain` script for one message whose outcome every group
 * acknowledged: its record, its compact block and bit (when injected), its attempt log, the
 * retention of each class (critical, high, normal, low) and the record TTL.
 */
export function retainArgs(
  keys: Keys,
  id: string,
  retention: readonly string[],
  ttl: number,
): [string, string, string, string, ...(string | number)[]] {
  const at = compactSlot(keys, id);
  const record = keys.message(id);
  return [
    record,
    at?.key ?? record,
    keys.attempts(id),
    at?.gone ?? record,
    ...retention,
    at?.slot ?? '',
    ttl,
    at?.bit ?? '',
  ];
}

/** The state a compact record's first character stands for. */
export const COMPACT_STATES: Readonly<Record<string, MessageState>> = {
  s: 'sent',
  a: 'sent',
  c: 'cancelled',
  x: 'suppressed',
};

/**
 * The record of a message compacted into its campaign's block (`delivery.retention:
 * compact`), or null: state, provider and its message id, campaign, tenant and class (from
 * the campaign), and when it became final. The address, reply and attempts are gone.
 */
export async function readCompact(redis: Redis, keys: Keys, id: string): Promise<MessageRecord | null> {
  const parsed = parseInjectedId(id);
  const at = compactSlot(keys, id);
  if (!parsed || !at) return null;
  const [fields, campaign] = await Promise.all([
    redis.hmget(at.key, at.field, String(at.slot * 2 + 1)),
    readCampaignFields(redis, keys, parsed.campaignId, CAMPAIGN_FLAGS),
  ]);
  const [meta, providerMessageId] = fields;
  const state = meta ? COMPACT_STATES[meta[0]!] : undefined;
  if (!meta || !state) return null;
  const bar = meta.indexOf('|');
  const finalAt = parseInt(meta.slice(1, bar), 36);

  return {
    id,
    state,
    priority: campaign.priority,
    to: '',
    tenantId: campaign.tenantId,
    campaignId: parsed.campaignId,
    queue: keys.campaignQueue(parsed.campaignId),
    attempts: 0,
    ambiguous: meta[0] === 'a' ? 1 : 0,
    lastReply: undefined,
    lastOutcome: undefined,
    provider: meta.slice(bar + 1) || undefined,
    providerMessageId: providerMessageId ?? undefined,
    receiver: undefined,
    createdAt: finalAt,
    updatedAt: finalAt,
    finalAt,
    lastEvent: undefined,
    lastEventAt: undefined,
    compact: true,
  };
}
