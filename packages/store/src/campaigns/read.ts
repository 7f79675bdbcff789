import type { Redis } from 'ioredis';
import type { Keys } from '@sluice/core';
import { CAMPAIGN_FLAGS, decodeStoredCampaign, type CampaignFlags, type StoredCampaign } from './codec.js';
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

/** A campaign's whole hash, decoded (one HGETALL); null if there is no campaign with this id. */
export async function readStoredCampaign(redis: Redis, keys: Keys, id: string): Promise<StoredCampaign | null> {
  return decodeStoredCampaign(id, await redis.hgetall(keys.campaign(id)));
}

/** The hashes of many campaigns in one round trip (a pipeline of HGETALLs); those that exist, by id. */
export async function readStoredCampaigns(
  redis: Redis,
  keys: Keys,
  ids: readonly string[],
): Promise<Map<string, StoredCampaign>> {
  const out = new Map<string, StoredCampaign>();
  if (ids.length === 0) return out;
  const pipeline = redis.pipeline();
  for (const id of ids) pipeline.hgetall(keys.campaign(id));
  for (const [i, [err, h]] of ((await pipeline.exec()) ?? []).entries()) {
    const c = err || h === null ? null : decodeStoredCampaign(ids[i]!, h as Record<string, string>);
    if (c) out.set(ids[i]!, c);
  }
  return out;
}
