import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { z } from 'zod';
import {
  PRIORITY_CLASSES,
  SluiceError,
  parseContent,
  parseInput,
  type CampaignContent,
  type FinalState,
  type Keys,
  type ServiceLogger,
} from '@sluice/core';
import { cancelCampaign, type CancelOptions, type CancelResult } from './cancel.js';
import { approveLaunch, launchCampaign, type ApproveOptions, type LaunchOptions } from './launch.js';
import { createLaunchStore } from './launch-store.js';
import type { LaunchGate, LaunchRecord } from './launch-types.js';
import { defineScripts } from '../redis/scripts.js';
import type { Queues } from '../redis/queues.js';
import { parseCursor, type InjectCursor } from './inject.js';
import { readWindow, type InjectWindow } from './inject-window.js';
import { createStore, type Store } from '../records/store.js';
import {
  archiveCampaign,
  campaignArchivedError,
  deleteCampaign,
  type ArchiveDeps,
  type ArchiveOptions,
} from './archive.js';
import { createCampaignWork } from './work.js';
import {
  CAMPAIGN_FIELDS,
  CAMPAIGN_FLAGS,
  CAMPAIGN_PAUSED,
  decodeCampaign,
  settingsOf,
  encodeCampaign,
  finalCount,
  type Campaign,
  type CampaignArchive,
  type CampaignHash,
  type StoredCampaign,
} from './codec.js';
import { readCampaignFields, readStoredCampaign } from './read.js';
import { writePauseCopies } from './pause.js';
import { resumeResult } from '../redis/results.js';

export type { Campaign } from './codec.js';

const NAME = /^[A-Za-z0-9_-]{1,64}$/;

/** What `campaigns.create` accepts. */
export const campaignInputSchema = z.strictObject({
  /** Defaults to a random id. */
  id: z.string().regex(NAME, { message: 'must match [A-Za-z0-9_-]{1,64}' }).optional(),
  name: z.string().max(200).optional(),
  tenantId: z.string().regex(NAME, { message: 'must match [A-Za-z0-9_-]{1,64}' }).default('default'),
  /** Class of the campaign's mail. @defaultValue `'low'` */
  priority: z.enum(PRIORITY_CLASSES).default('low'),
  /** The campaign's own limit, per second. @defaultValue config `defaults.campaign` */
  rate: z.number().positive().optional(),
  burst: z.number().int().positive().optional(),
  /**
   * The content every recipient gets (`campaigns.inject`): from, subject, text/html as
   * Handlebars templates over each recipient's `data`, or an ESP template. Stored once;
   * it cannot change once set. Without it the campaign takes whole messages (`send`).
   */
  content: z.unknown().optional(),
});

/** Input of `campaigns.create`. */
export type CampaignInput = z.input<typeof campaignInputSchema>;

/** `campaigns.status(id)`. */
export interface CampaignStatus extends Campaign {
  /** Its queue is paused (admission stops there). */
  paused: boolean;
  /** Cancelled (`campaigns.cancel`, `sluice campaigns cancel`): paused for good. */
  cancelled: boolean;
  /** Messages accepted and in each final state. */
  counts: Record<'accepted' | FinalState, number>;
  /** Accepted and not final yet. */
  pending: number;
  /** Jobs in the campaign's queue: waiting (incl. paused) and delayed (booked or backing off). */
  queue: { waiting: number; delayed: number; active: number };
  /** Archived (`campaigns.archive`, or the leader once finished): when, by whom, its content in short; null while active. */
  archive: CampaignArchive | null;
  /** Its launch: the forecast, the decision with its projections and approver, receivers stopped; null if never launched. */
  launch: LaunchRecord | null;
  /**
   * Where its injection stands (`campaigns.inject`): every recipient before `position` is
   * accepted; resume with `inject(id, rest, { from: cursor.position })`.
   */
  cursor: InjectCursor;
  /** Its injection window: how many recipients Redis may hold for it now (see `InjectWindow`). */
  window: InjectWindow;
}

/** Options of `campaigns.pause`. */
export interface PauseOptions {
  /** Who pauses (logged). @defaultValue `'unknown'` */
  actor?: string;
}

/** Options of `campaigns.resume`. */
export interface ResumeOptions {
  /** Who resumes (logged). @defaultValue `'unknown'` */
  actor?: string;
  /**
   * What resuming a cancelled campaign does: `'refuse'` throws `campaign_cancelled`;
   * `'skip'` leaves it as it is and resolves `false` (the governor, Bull Board's Resume all).
   * @defaultValue `'refuse'`
   */
  ifCancelled?: 'refuse' | 'skip';
}

/**
 * The campaign lifecycle: the one place that creates, pauses, resumes, cancels and reads a
 * campaign. The client, the admin API, Bull Board, the CLI and the governor all call it, so
 * "a cancelled campaign is never resumed" holds for each of them.
 */
export interface Campaigns {
  /** Claims the id (`campaign_exists` if taken) and writes the settings. */
  create(input: CampaignInput): Promise<Campaign>;
  /** The campaign's settings; null if there is none with this id. */
  get(id: string): Promise<Campaign | null>;
  /** Every active campaign's id, sorted (archived ones leave this list). */
  ids(): Promise<string[]>;
  /** Every archived campaign's id, sorted (until its record expires). */
  archivedIds(): Promise<string[]>;
  /** The campaign's content (`create({ content })`); null without (or no such campaign). */
  content(id: string): Promise<CampaignContent | null>;
  /**
   * Stops the campaign's sends within a second; its backlog waits. The flag stops admitted
   * mail at the workers; the queue pause stops admission. `unknown_campaign` if none.
   */
  pause(id: string, options?: PauseOptions): Promise<void>;
  /**
   * Continues where it stopped: un-pauses its queue and clears the flag. A cancelled campaign
   * is refused (`campaign_cancelled`, nothing changed) or, with `ifCancelled: 'skip'`, left as
   * it is (resolves `false`). `unknown_campaign` if none. Resolves `true` when resumed.
   */
  resume(id: string, options?: ResumeOptions): Promise<boolean>;
  /**
   * Cancels the campaign for good (see {@link cancelCampaign}): flags, queue pause, every
   * message not yet final ends `cancelled`, its jobs are removed, sends under way are waited for.
   */
  cancel(id: string, options: CancelOptions): Promise<CancelResult>;
  /**
   * Settings, pause and cancel, counters and queue counts. `unknown_campaign` if none. An
   * archived campaign answers from its record (`archive` set, its queue empty, its window 0).
   */
  status(id: string): Promise<CampaignStatus>;
  /**
   * Archives a finished campaign (docs/design/campaigns.md, Campaigns that end): its queue is removed, its
   * counters, content summary and launch decision stay in its record (`status` answers), and it
   * leaves the active lists. `campaign_not_finished` naming why if it is not finished (messages
   * not final, jobs queued, a launch waiting). Resolves `false` if it was archived already.
   * Audited.
   */
  archive(id: string, options?: ArchiveOptions): Promise<boolean>;
  /**
   * Deletes an archived or finished campaign for good (`campaign_not_finished` otherwise): its
   * record and queue go, its id is free; its messages' records keep their own TTL. Audited.
   */
  delete(id: string, options?: ArchiveOptions): Promise<void>;
  /**
   * Makes a campaign queue paused outside Sluice (another board, a script that knows only
   * BullMQ) the campaign's pause: sets the flag, so its admitted mail holds too. Nothing if
   * the queue is not paused or the flag is set. Resolves `true` when it set the flag.
   */
  adoptQueuePause(id: string): Promise<boolean>;
  /**
   * Asks for the campaign's admission decision on a forecast (recipients per domain, or a
   * sample Sluice scales) and waits for it (see {@link launchCampaign}): the scheduler's
   * governor leader decides accept, delay, split, reject or held, and stores it with the
   * projections per receiving organisation. `no_scheduler` if none decided in `timeoutMs`.
   */
  launch(id: string, forecast: unknown, options?: LaunchOptions): Promise<LaunchRecord>;
  /** An operator approves a delay or split waiting for it (audited); see {@link approveLaunch}. */
  approve(id: string, options: ApproveOptions): Promise<LaunchRecord>;
  /** What the injection may do now (one HGET): open (within waves, minus stopped domains), wait, or refused. */
  gate(id: string): Promise<LaunchGate>;
}

/** Options of {@link createCampaigns}. */
export interface CampaignsOptions {
  /** A connection of the caller's; not closed here. */
  redis: Redis;
  keys: Keys;
  /** The process's queue handles (`createQueues`); not closed here. */
  queues: Queues;
  /** The record store, for the fleet's `recordTtlSeconds`. @defaultValue `createStore({ redis, keys })` */
  store?: Store;
  /** Logs each pause and resume with its actor. @defaultValue none */
  logger?: ServiceLogger;
  /** How long an archived record stays. @defaultValue 90 days (config `campaigns.archivedRetentionMs`) */
  archivedRetentionMs?: number;
}

/** Reads a campaign hash (as HGETALL answers it): its settings, or null if it does not exist. */
export function parseCampaign(id: string, h: CampaignHash): Campaign | null {
  return decodeCampaign(id, h);
}

const unknownCampaign = (id: string): SluiceError =>
  new SluiceError('unknown_campaign', `no campaign with id ${id}`, { path: 'campaignId' });

/** The error every surface shows for resuming a cancelled campaign. */
export const campaignCancelledError = (id: string): SluiceError =>
  new SluiceError(
    'campaign_cancelled',
    `campaign ${id} was cancelled: it cannot be resumed (cancelling cannot be undone)`,
    {
      path: 'campaignId',
    },
  );

/** Creates the campaign lifecycle of one process. */
export function createCampaigns(options: CampaignsOptions): Campaigns {
  const { keys, queues, logger } = options;
  const redis = defineScripts(options.redis);
  const store = options.store ?? createStore({ redis: options.redis, keys });
  const launches = createLaunchStore(options.redis, keys);
  const work = createCampaignWork({ redis: options.redis, keys });
  const ended: ArchiveDeps = { redis, keys, queues, launches };

  async function mustGet(id: string): Promise<StoredCampaign> {
    const c = await readStoredCampaign(redis, keys, id);
    if (!c) throw unknownCampaign(id);
    return c;
  }

  /** What every status says from the campaign's hash: its settings, flags, counts and what is pending. */
  function hashStatus(stored: StoredCampaign) {
    const { paused, cancelled, counts } = stored;
    return {
      ...settingsOf(stored),
      paused,
      cancelled,
      counts,
      pending: Math.max(0, counts.accepted - finalCount(counts)),
    };
  }

  /** An archived campaign's status, from its record alone (its queue is gone: no handle is made). */
  function archivedStatus(stored: StoredCampaign): CampaignStatus {
    const { archive, archivedLaunch, archivedCursor } = stored;
    return {
      ...hashStatus(stored),
      queue: { waiting: 0, delayed: 0, active: 0 },
      archive,
      launch: archivedLaunch,
      cursor: parseCursor(archivedCursor),
      window: { ready: 0, max: 0, waiting: 0, pending: 0, rate: 0 },
    };
  }

  function refused(id: string, ifCancelled: ResumeOptions['ifCancelled']): false {
    if (ifCancelled === 'skip') return false;
    throw campaignCancelledError(id);
  }

  return {
    async create(input) {
      const c = parseInput(campaignInputSchema, input, { code: 'invalid_argument', what: 'campaign' });
      const content = c.content === undefined ? undefined : parseContent(c.content);
      const id = c.id ?? `c${randomBytes(8).toString('hex')}`;
      const createdAt = Date.now();
      const fields = encodeCampaign({ ...c, name: c.name ?? id, createdAt });
      // HSETNX on createdAt claims the id; the rest is written only by the winner.
      const claimed = await redis.hsetnx(keys.campaign(id), CAMPAIGN_FIELDS.createdAt, String(createdAt));
      if (claimed === 0) throw new SluiceError('campaign_exists', `campaign ${id} exists`, { path: 'id' });
      // The campaign's own keys (its hash tag) in one MULTI, then the fleet-wide index (another
      // tag): a create cut off between the two is listed again by its launch, which adds it.
      const write = redis.multi().hset(keys.campaign(id), fields);
      if (content) write.set(keys.campaignContent(id), JSON.stringify(content));
      await write.exec();
      await redis.sadd(keys.campaigns(), id);
      return (await this.get(id))!;
    },

    async get(id) {
      const c = await readStoredCampaign(redis, keys, id);
      return c && settingsOf(c);
    },

    async content(id) {
      const json = await redis.get(keys.campaignContent(id));
      return json === null ? null : (JSON.parse(json) as CampaignContent);
    },

    async ids() {
      return (await redis.smembers(keys.campaigns())).sort();
    },

    async archivedIds() {
      return (await redis.zrange(keys.archivedCampaigns(), '0', '-1')).sort();
    },

    async pause(id, opts = {}) {
      if ((await mustGet(id)).archivedAt !== undefined) throw campaignArchivedError(id);
      // The flag stops admitted mail at the workers; the queue pause stops admission.
      await store.setCampaignPaused(id, true);
      await queues.campaign(id).pause();
      logger?.info({ event: 'campaign_paused', campaignId: id, actor: opts.actor ?? 'unknown' }, 'campaign paused');
    },

    async resume(id, opts = {}) {
      const flags = await readCampaignFields(redis, keys, id, CAMPAIGN_FLAGS);
      if (!flags.exists) throw unknownCampaign(id);
      if (flags.archived) throw campaignArchivedError(id);
      // Cancelling cannot be undone: nothing is touched.
      if (flags.cancelled) return refused(id, opts.ifCancelled);
      const queue = queues.campaign(id);
      await queue.resume();
      // The flag is cleared only if the campaign is still not cancelled (one Lua call). A
      // cancel that landed after the check above set its flags first: its pause wins, and
      // the queue this call un-paused is paused again.
      const resumed = resumeResult(await redis.sluiceResumeCampaign(keys.campaign(id)));
      if (resumed === 'unknown') throw unknownCampaign(id);
      if (resumed === 'cancelled') {
        await queue.pause();
        return refused(id, opts.ifCancelled);
      }
      await writePauseCopies(redis, keys, id, false);
      // Its backlog waits in its queue: the schedulers' polls take it up again.
      await work.mark([id]);
      logger?.info({ event: 'campaign_resumed', campaignId: id, actor: opts.actor ?? 'unknown' }, 'campaign resumed');
      return true;
    },

    cancel: (id, opts) => cancelCampaign({ redis, keys, store, queues }, id, opts),

    async status(id) {
      const c = await mustGet(id);
      if (c.archivedAt !== undefined) return archivedStatus(c);
      const q = queues.campaign(id);
      // The hash read once gives the flags and counts; the queue says whether it is paused.
      const [paused, jobs, cursor, window, launch] = await Promise.all([
        q.isPaused(),
        q.getJobCounts('waiting', 'delayed', 'active', 'prioritized'),
        redis.get(keys.campaignCursor(id)),
        readWindow(redis, keys, queues, id),
        launches.read(id),
      ]);
      return {
        ...hashStatus(c),
        paused,
        queue: {
          waiting: (jobs.waiting ?? 0) + (jobs.prioritized ?? 0),
          delayed: jobs.delayed ?? 0,
          active: jobs.active ?? 0,
        },
        archive: null,
        launch: launch?.record ?? null,
        cursor: parseCursor(cursor),
        window,
      };
    },

    async adoptQueuePause(id) {
      const [flag, queuePaused] = await Promise.all([
        readCampaignFields(redis, keys, id, CAMPAIGN_PAUSED),
        queues.campaign(id).isPaused(),
      ]);
      if (!queuePaused || flag) return false;
      await store.setCampaignPaused(id, true);
      return true;
    },

    archive: (id, opts) =>
      archiveCampaign(ended, id, { ...opts, retentionMs: opts?.retentionMs ?? options.archivedRetentionMs }),
    delete: (id, opts) => deleteCampaign(ended, id, opts),

    launch: (id, forecast, opts) => launchCampaign({ redis, keys, launches }, id, forecast, opts),
    approve: (id, opts) => approveLaunch({ redis, keys, launches }, id, opts),
    gate: (id) => launches.gate(id, Date.now()),
  };
}
