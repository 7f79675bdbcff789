import type { Redis } from 'ioredis';
import { HOMES, type Keys } from '@sluice/core';
import { CAMPAIGN_FIELDS, CAMPAIGN_PAUSED, encodePaused } from './codec.js';
import { readCampaignFields } from './read.js';

// A campaign's pause flag lives in its hash (what every reader shows) and, copied, in its part
// in each message home, where a worker's submit mark reads it in the same script as the record
// (transition-3.lua): the hash and the records are of different hash tags.

/**
 * Pauses or resumes a campaign's flag. A pause writes the copies first and the hash last, so
 * the hash says paused only once every home does; a resume clears the hash first (the caller's
 * script decides it) and the copies after. A crash between leaves copies the hash does not
 * back, which {@link repairPauseCopy} clears when a worker meets one.
 */
export async function writePause(redis: Redis, keys: Keys, id: string, paused: boolean): Promise<void> {
  if (paused) {
    await writePauseCopies(redis, keys, id, true);
    await redis.hset(keys.campaign(id), encodePaused());
  } else {
    await redis.hdel(keys.campaign(id), CAMPAIGN_FIELDS.paused);
    await writePauseCopies(redis, keys, id, false);
  }
}

/** Sets or clears the flag's copy in every home, side by side. */
export async function writePauseCopies(redis: Redis, keys: Keys, id: string, paused: boolean): Promise<void> {
  const { paused: field } = CAMPAIGN_FIELDS;
  await Promise.all(
    HOMES.map((h) =>
      paused ? redis.hset(keys.campaignHome(id, h), field, '1') : redis.hdel(keys.campaignHome(id, h), field),
    ),
  );
}

/**
 * A worker's mark was held by a home's copy of the flag: whether the campaign is paused
 * indeed. A copy the hash does not back (a resume cut off between the two) is cleared, and
 * the caller moves again.
 */
export async function repairPauseCopy(redis: Redis, keys: Keys, id: string, home: number): Promise<boolean> {
  if (await readCampaignFields(redis, keys, id, CAMPAIGN_PAUSED)) return true;
  await redis.hdel(keys.campaignHome(id, home), CAMPAIGN_FIELDS.paused);
  return false;
}
