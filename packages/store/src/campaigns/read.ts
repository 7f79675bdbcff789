import type { Redis } from 'ioredis';
import { HOMES, type Keys } from '@sluice/core';
import {
  CAMPAIGN_COUNTS,
  CAMPAIGN_FLAGS,
  addCounts,
  decodeStoredCampaign,
  type CampaignCounts,
  type CampaignFlags,
  type StoredCampaign,
} from './codec.js';
import type { HashRead } from '../redis/hash-read.js';

// Reads of the campaign hash for whoever needs one outside the lifecycle: the client's intake,
// the launch decisions, the status, explain and the board read through these, never the hash.

/** Some fields of one campaign's hash (one HMGET), decoded. */
export async function readCampaignFields<T>(redis: Redis, keys: Keys, id: string, what: HashRead<T>): Promise<T> {
  return what.decode(await redis.hmget(keys.campaign(id), ...what.fields));
}

/**
 * Whether each campaign exists, its tenant, class and name, and whether it is paused,
 * cancelled or archived: one HMGET each, sent side by side, in the order of `ids`.
 */
export function readCampaignFlags(redis: Redis, keys: Keys, ids: readonly string[]): Promise<CampaignFlags[]> {
  return Promise.all(ids.map((id) => readCampaignFields(redis, keys, id, CAMPAIGN_FLAGS)));
}

/**
 * A campaign's counters: the sum of its parts in the message homes (one HMGET each, side by
 * side). An archived campaign's parts expire with its record.
 */
export async function readCampaignCounts(redis: Redis, keys: Keys, id: string): Promise<CampaignCounts> {
  const parts = await Promise.all(
    HOMES.map(async (h) =>
      CAMPAIGN_COUNTS.decode(await redis.hmget(keys.campaignHome(id, h), ...CAMPAIGN_COUNTS.fields)),
    ),
  );
  return addCounts(parts);
}

/** A campaign's whole hash and its counters, decoded; null if there is no campaign with this id. */
export async function readStoredCampaign(redis: Redis, keys: Keys, id: string): Promise<StoredCampaign | null> {
  const [h, counts] = await Promise.all([redis.hgetall(keys.campaign(id)), readCampaignCounts(redis, keys, id)]);
  return decodeStoredCampaign(id, h, counts);
}

/** Many campaigns, read side by side; those that exist, by id. */
export async function readStoredCampaigns(
  redis: Redis,
  keys: Keys,
  ids: readonly string[],
): Promise<Map<string, StoredCampaign>> {
  const out = new Map<string, StoredCampaign>();
  const read = await Promise.all(ids.map((id) => readStoredCampaign(redis, keys, id)));
  read.forEach((c, i) => {
    if (c) out.set(ids[i]!, c);
  });
  return out;
}
