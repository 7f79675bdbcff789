import type { Redis } from 'ioredis';
import type { Keys } from '@sluice/core';
import {
  archiveCampaign,
  checkFinished,
  endInIndexes,
  forgetArchived,
  removeQueue,
  type ArchiveDeps,
} from './archive.js';
import { createCampaignWork } from './work.js';
import { defineScripts } from '../redis/scripts.js';
import { createLaunchStore } from './launch-store.js';
import { createQueues } from '../redis/queues.js';
import { FINISHED_FIELDS, encodeFinished } from './codec.js';

/** Options of {@link createCampaignArchiver}. */
export interface CampaignArchiverOptions {
  /** A connection of the caller's; not closed here. */
  redis: Redis;
  keys: Keys;
  /** Config `campaigns`: when a finished campaign is archived, how long its record stays, how often to look. */
  settings: { archiveAfterMs: number; archivedRetentionMs: number; archiveCheckMs: number };
  logger?: { info(obj: object, msg: string): void; warn(obj: object, msg: string): void };
}

/** A chore of the governor leader (`GovernorOptions.chores`). */
export interface CampaignArchiver {
  name: string;
  /** One pass if `archiveCheckMs` has gone by since the last (else nothing); resolves how many it archived. */
  run(now: number): Promise<number>;
  close(): Promise<void>;
}

const PAGE = 200;

/**
 * The leader's archive chore (docs/design/campaigns.md, Campaigns that end), every `archiveCheckMs`:
 * 1. finishes the queue removal of campaigns a crash left archived with their queue, and the
 *    index step of a campaign archived or deleted by a call a crash cut off;
 * 2. ends archived records past `archivedRetentionMs`;
 * 3. looks at each active campaign without work: one found finished is stamped `finishedAt`
 *    (with its `n:accepted`), and archived once it stayed finished, with the same count,
 *    `archiveAfterMs`; one found with jobs in its queue but no work mark is marked again (a
 *    producer that crashed between its job and its mark).
 * Its cost grows with the active campaigns, once a minute on one scheduler; the polls don't.
 */
export function createCampaignArchiver(options: CampaignArchiverOptions): CampaignArchiver {
  const { keys, settings, logger } = options;
  const redis = defineScripts(options.redis);
  const queues = createQueues({ redis: options.redis, keys });
  const deps: ArchiveDeps = { redis, keys, queues, launches: createLaunchStore(options.redis, keys) };
  const work = createCampaignWork({ redis: options.redis, keys });
  let last = -Infinity;

  async function visit(id: string, now: number): Promise<boolean> {
    // An active campaign whose hash is gone was deleted by a call cut off before its index step.
    if ((await redis.exists(keys.campaign(id))) === 0) {
      await endInIndexes(deps, id, 'deleted');
      await removeQueue(deps, id);
      return false;
    }
    const check = await checkFinished(deps, id, now);
    await queues.drop(keys.campaignQueue(id));
    if (!check.finished) {
      if (check.jobs > 0) await work.mark([id]);
      if (check.since) await redis.hdel(keys.campaign(id), ...FINISHED_FIELDS);
      return false;
    }
    // Archived by a call cut off before its index step: finished now.
    if (check.archived) {
      await archiveCampaign(deps, id, { actor: 'sluice', now, retentionMs: settings.archivedRetentionMs });
      return false;
    }
    if (check.unused) return false;
    if (check.since?.accepted !== check.accepted) {
      await redis.hset(keys.campaign(id), encodeFinished(now, check.accepted));
      return false;
    }
    if (now - check.since.at < settings.archiveAfterMs) return false;
    await archiveCampaign(deps, id, { actor: 'sluice', now, retentionMs: settings.archivedRetentionMs });
    logger?.info({ event: 'campaign_archived', campaignId: id }, 'campaign archived');
    return true;
  }

  async function pass(now: number): Promise<number> {
    for (const id of await redis.smembers(keys.campaignsArchiving())) await removeQueue(deps, id);
    const old = await redis.zrangebyscore(keys.archivedCampaigns(), '-inf', now - settings.archivedRetentionMs);
    for (const id of old) await forgetArchived(deps, id);
    const marked = await work.read();
    let archived = 0;
    let cursor = '0';
    do {
      const [next, ids] = await redis.sscan(keys.campaigns(), cursor, 'COUNT', PAGE);
      cursor = next;
      for (const id of ids) {
        if (marked.has(id)) continue;
        try {
          if (await visit(id, now)) archived++;
        } catch (err) {
          // One campaign that fails (deleted meanwhile, took mail while being archived) is
          // looked at again next pass; the others go on.
          logger?.warn({ err, campaignId: id }, 'campaign archive check failed');
        }
      }
    } while (cursor !== '0');
    return archived;
  }

  return {
    name: 'campaign archive',
    async run(now) {
      if (now - last < settings.archiveCheckMs) return 0;
      last = now;
      return pass(now);
    },
    close: () => queues.close(),
  };
}
