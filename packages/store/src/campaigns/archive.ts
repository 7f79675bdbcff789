import { HOMES, SluiceError, type CampaignContent, type Keys } from '@sluice/core';
import type { StoreRedis } from '../redis/scripts.js';
import type { LaunchStore } from './launch-store.js';
import type { Queues } from '../redis/queues.js';
import { finalCount, type ContentSummary } from './codec.js';
import { readStoredCampaign } from './read.js';
import { deleteResult, endResult } from '../redis/results.js';

/** The audit stream is capped near this many entries (as the overrides' writers). */
const AUDIT_MAXLEN = 100_000;

/** Whether a campaign is finished, as archiving judges it. */
export type Finished =
  | {
      finished: true;
      archived: boolean;
      accepted: number;
      unused: boolean;
      /** When the archive chore first found it finished, at which `n:accepted`. */
      since?: { at: number; accepted: number };
      /** Its queue's job counter (every add raises it): the archive and delete scripts check it did not move. */
      adds: string;
    }
  | { finished: false; why: string; jobs: number; since: boolean };

/** What the archive and delete operations work with (the lifecycle's own). */
export interface ArchiveDeps {
  redis: StoreRedis;
  keys: Keys;
  queues: Queues;
  launches: LaunchStore;
}

/** Options of `campaigns.archive` and `campaigns.delete`. */
export interface ArchiveOptions {
  /** Who does it (audited). @defaultValue `'unknown'` */
  actor?: string;
  /** How long the archived record stays. @defaultValue 90 days (config `campaigns.archivedRetentionMs`) */
  retentionMs?: number;
  /** Now (tests step it). @defaultValue `Date.now()` */
  now?: number;
}

/** The default of `campaigns.archivedRetentionMs`. */
export const DEFAULT_RETENTION_MS = 90 * 86_400_000;

const JOB_STATES = ['waiting', 'prioritized', 'delayed', 'active', 'waiting-children'] as const;

const unknownCampaign = (id: string): SluiceError =>
  new SluiceError('unknown_campaign', `no campaign with id ${id}`, { path: 'campaignId' });

/** The error a send, injection or change of an archived campaign gets. */
export const campaignArchivedError = (id: string, path = 'campaignId'): SluiceError =>
  new SluiceError(
    'campaign_archived',
    `campaign ${id} is archived: it takes no more mail and cannot change (its record stays for campaigns.status)`,
    { path },
  );

const notFinished = (id: string, why: string): SluiceError =>
  new SluiceError('campaign_not_finished', `campaign ${id} is not finished: ${why}`, { path: 'campaignId' });

/** The nine keys of the archive and delete scripts. */
/** The keys of the archive and delete scripts: the campaign's own, under its hash tag. */
function endKeys(deps: ArchiveDeps, id: string): [string, string, string, string, string] {
  const { keys } = deps;
  return [
    keys.campaign(id),
    keys.campaignContent(id),
    keys.campaignCursor(id),
    keys.launch(id),
    deps.queues.campaign(id).keys.id!,
  ];
}

/**
 * Takes an ended campaign off the fleet-wide indexes (one MULTI under their hash tag): it
 * leaves the active campaigns, the campaigns with work and the launches; an archived one joins
 * the archived (at `archivedAt`), a deleted one leaves them; either's queue is listed for
 * removal. Idempotent: the archive chore runs it again for a campaign a crash left half ended.
 */
export async function endInIndexes(
  deps: ArchiveDeps,
  id: string,
  end: { archivedAt: number } | 'deleted',
): Promise<void> {
  const { redis, keys } = deps;
  const multi = redis
    .multi()
    .srem(keys.campaigns(), id)
    .srem(keys.launches(), id)
    .zrem(keys.campaignsWithWork(), id)
    .sadd(keys.campaignsArchiving(), id);
  if (end === 'deleted') multi.zrem(keys.archivedCampaigns(), id);
  else multi.zadd(keys.archivedCampaigns(), 'NX', end.archivedAt, id);
  await multi.exec();
}

function summarize(json: string | null): ContentSummary | null {
  if (json === null) return null;
  const c = JSON.parse(json) as CampaignContent;
  return {
    from: c.from.name ? `${c.from.name} <${c.from.address}>` : c.from.address,
    ...(c.subject !== undefined ? { subject: c.subject } : {}),
    ...(c.template ? { template: c.template.name } : {}),
    ...(c.stream !== undefined ? { stream: c.stream } : {}),
    bytes: Buffer.byteLength(json),
  };
}

/**
 * Whether a campaign is finished: no message accepted and not final, nothing in its queue
 * (waiting, delayed, active), no launch waiting (pending, delayed, held, or a wave still to
 * open). A cancelled campaign needs only the queue empty. (The leader's chore also passes by a
 * campaign a scheduler marks as having work.)
 * `unused`: it never accepted a message (archived by hand only).
 */
export async function checkFinished(deps: ArchiveDeps, id: string, now: number): Promise<Finished> {
  const { redis, keys, queues, launches } = deps;
  const c = await readStoredCampaign(redis, keys, id);
  if (!c) throw unknownCampaign(id);
  const { accepted } = c.counts;
  const queue = queues.campaign(id);
  const adds = (await redis.get(queue.keys.id!)) ?? '0';
  if (c.archivedAt !== undefined) return { finished: true, archived: true, accepted, unused: false, adds };
  const pending = Math.max(0, accepted - finalCount(c.counts));
  const { cancelled, finished } = c;
  const since = finished !== undefined;
  const no = (why: string, jobs = 0): Finished => ({ finished: false, why, jobs, since });
  const counts = await queue.getJobCounts(...JOB_STATES);
  const jobs = Object.values(counts).reduce((a, b) => a + b, 0);
  if (pending > 0 && !cancelled) return no(`${pending} messages not yet final; cancel it first`, jobs);
  if (jobs > 0) return no(`${jobs} jobs in its queue`, jobs);
  if (!cancelled) {
    const gate = await launches.gate(id, now);
    if (gate.state === 'wait') return no(`its launch waits (${gate.reason}); cancel it first`);
    if (gate.state === 'open' && gate.nextAtMs !== undefined)
      return no(`its next wave opens at ${new Date(gate.nextAtMs).toISOString()}; cancel it first`);
  }
  return {
    finished: true,
    archived: false,
    accepted,
    unused: accepted === 0 && !cancelled,
    adds,
    ...(finished ? { since: finished } : {}),
  };
}

async function audit(deps: ArchiveDeps, action: string, id: string, actor: string, now: number): Promise<void> {
  await deps.redis.xadd(
    deps.keys.audit(),
    'MAXLEN',
    '~',
    AUDIT_MAXLEN,
    '*',
    ...['action', action, 'at', String(now), 'scope', 'campaign', 'name', id, 'actor', actor],
  );
}

/**
 * Removes the queue of a campaign archived or deleted (listed in `campaignsArchiving` by the
 * script that ended it), then takes it off that list. BullMQ's obliterate pauses the queue
 * first (it refuses a queue not paused) and needs `force` for a job left active; the handle
 * is closed after, so nothing writes the queue's meta again.
 */
export async function removeQueue(deps: ArchiveDeps, id: string): Promise<void> {
  const queue = deps.queues.campaign(id);
  await queue.obliterate({ force: true });
  await deps.queues.drop(queue.name);
  await deps.redis.srem(deps.keys.campaignsArchiving(), id);
}

/**
 * Archives a finished campaign (see {@link checkFinished}; `campaign_not_finished` naming why
 * otherwise): its record in one script under its hash tag, then the fleet-wide indexes, then
 * its queue is removed and its parts in the homes expire with its record. Resolves `false` if
 * it was archived already (what a crash left undone is finished then).
 */
export async function archiveCampaign(deps: ArchiveDeps, id: string, options: ArchiveOptions = {}): Promise<boolean> {
  const { redis, keys } = deps;
  const now = options.now ?? Date.now();
  const check = await checkFinished(deps, id, now);
  if (!check.finished) throw notFinished(id, check.why);
  if (!check.archived) {
    const [content, launch] = await Promise.all([redis.get(keys.campaignContent(id)), deps.launches.read(id)]);
    const ended = endResult(
      await redis.sluiceArchiveCampaign(
        ...endKeys(deps, id),
        now,
        options.retentionMs ?? DEFAULT_RETENTION_MS,
        options.actor ?? 'unknown',
        content === null ? '' : JSON.stringify(summarize(content)),
        launch ? JSON.stringify(launch.record) : '',
        check.adds,
      ),
    );
    if (ended === 'unknown') throw unknownCampaign(id);
    if (ended === 'accepted') throw notFinished(id, 'it took mail while being archived');
    if (ended === 'done') await audit(deps, 'archive', id, options.actor ?? 'unknown', now);
  }
  const archivedAt = Number((await redis.hget(keys.campaign(id), 'archivedAt')) ?? now);
  if ((await redis.sismember(keys.campaigns(), id)) === 1) await endInIndexes(deps, id, { archivedAt });
  if ((await redis.sismember(keys.campaignsArchiving(), id)) === 1) await removeQueue(deps, id);
  await expireHomeParts(deps, id, options.retentionMs ?? DEFAULT_RETENTION_MS);
  return !check.archived;
}

/**
 * Deletes a campaign for good: an archived one, or an active one found finished (refused
 * otherwise, `campaign_not_finished`). Its hash, content, cursor and launch go and its id is
 * free; its messages' records stay until their own TTL (so reusing the id before then finds
 * the old messages' ids taken).
 */
export async function deleteCampaign(deps: ArchiveDeps, id: string, options: ArchiveOptions = {}): Promise<void> {
  const { redis, keys } = deps;
  const now = options.now ?? Date.now();
  const check = await checkFinished(deps, id, now);
  if (!check.finished) throw notFinished(id, check.why);
  const ended = deleteResult(await redis.sluiceDeleteCampaign(...endKeys(deps, id), check.archived ? '' : check.adds));
  if (ended === 'unknown') throw unknownCampaign(id);
  if (ended === 'accepted') throw notFinished(id, 'it took mail while being deleted');
  await audit(deps, 'delete', id, options.actor ?? 'unknown', now);
  await endInIndexes(deps, id, 'deleted');
  if (ended === 'active') await removeQueue(deps, id);
  else await redis.srem(keys.campaignsArchiving(), id);
  await expireHomeParts(deps, id, 0);
}

/**
 * Ends an archived record past its retention (its hash expires by itself; a stepped clock
 * gets there first): deletes it if it is still archived, and takes its id off the index once
 * its hash is gone or belongs to a new campaign of the same id.
 */
export async function forgetArchived(deps: ArchiveDeps, id: string): Promise<void> {
  const { redis, keys } = deps;
  // Deleted only while still archived: an active campaign of the same id keeps its hash.
  const ended = deleteResult(await redis.sluiceDeleteCampaign(...endKeys(deps, id), '-'));
  await redis.zrem(keys.archivedCampaigns(), id);
  if (ended === 'archived') await expireHomeParts(deps, id, 0);
}

/**
 * Sets the TTL of a campaign's parts in the homes (its counters) to its record's retention, or
 * deletes them (`0`): side by side, one command a home.
 */
async function expireHomeParts(deps: ArchiveDeps, id: string, retentionMs: number): Promise<void> {
  const { redis, keys } = deps;
  await Promise.all(
    HOMES.map((h) =>
      retentionMs > 0 ? redis.pexpire(keys.campaignHome(id, h), retentionMs) : redis.del(keys.campaignHome(id, h)),
    ),
  );
}
