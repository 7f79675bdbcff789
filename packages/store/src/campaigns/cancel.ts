import type { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { PRIORITY_CLASSES, SluiceError, messagesOfJob, type Keys } from '@sluice/core';
import type { Queues } from '../redis/queues.js';
import { createFillingBatches } from '../redis/filling.js';
import type { Store } from '../records/store.js';
import { campaignArchivedError } from './archive.js';
import { CAMPAIGN_FLAGS, encodeCancel } from './codec.js';
import { writePauseCopies } from './pause.js';
import { readCampaignFields } from './read.js';

/** Options of `campaigns.cancel`. */
export interface CancelOptions {
  /** Who cancels (kept on the campaign). */
  actor: string;
  /** Why (kept on the campaign and in each message's last reply). */
  reason: string;
  /**
   * How long to wait for sends that were already under way (state `sending` or `submitted`)
   * to end. Their requests may be with the ESP: they end as their answer says. The fleet's
   * default (`cancelCampaign` of `@sluice/ops`, `sluice campaigns cancel`) is the longest
   * provider `timeoutMs` plus 5 s.
   */
  waitMs: number;
  /** How often to look again while waiting. @defaultValue `200` */
  pollMs?: number;
}

/** What `campaigns.cancel` did. */
export interface CancelResult {
  id: string;
  /** Messages this call ended as `cancelled`. */
  cancelled: number;
  /** Messages found already final (sent, rejected, … or cancelled before). */
  alreadyFinal: number;
  /** Jobs removed from the campaign's queue and the dispatch queues. */
  removedJobs: number;
  /** Sends under way when it began, that ended while it waited (as their answer said). */
  finishedInFlight: number;
  /**
   * Sends still under way when the wait ran out (ids). Empty: nothing of the campaign can be
   * sent any more. Not empty: these may still be accepted by the ESP.
   */
  stillInFlight: string[];
}

/** What {@link cancelCampaign} works with (the lifecycle's own). */
export interface CancelDeps {
  redis: Redis;
  keys: Keys;
  store: Store;
  queues: Queues;
}

const JOB_TYPES = ['waiting', 'prioritized', 'delayed', 'active', 'waiting-children'] as const;
const PAGE = 1_000;
const CANCELLABLE = ['queued', 'dispatched', 'retrying'] as const;
const IN_FLIGHT = new Set(['sending', 'submitted']);

/**
 * Cancels a campaign for good: nothing of it is sent once this returns with `stillInFlight`
 * empty.
 *
 * 1. The campaign is marked cancelled and paused (`paused: 1` is the flag a worker's
 *    attempt checks atomically before a send: from here on no attempt of it starts).
 *    Its queue is paused, so the scheduler admits nothing more of it.
 * 2. Every message of it found in its queue, in the dispatch queues or in a dispatch batch a
 *    scheduler is filling (kept in Redis until its job is written) is finalized as `cancelled`
 *    (the `finalize` script never changes a final state, so what was sent stays sent). A
 *    message whose job was missed still cannot go: its attempt is held by the flag.
 * 3. Its jobs are removed (an active one is left to its worker, which finds the record final).
 * 4. Sends that had already started are waited for; any that come back to be retried are
 *    cancelled too. The queue (and the batches being filled) is swept again until a sweep finds
 *    nothing (a job that moved between lists while they were read is found then), never
 *    drained blindly.
 *
 * The campaign keeps its counters (`n:cancelled` counts what this ended). It can never be
 * resumed: `campaigns.resume` refuses it (`campaign_cancelled`).
 */
export async function cancelCampaign(deps: CancelDeps, id: string, options: CancelOptions): Promise<CancelResult> {
  const { redis, keys, store, queues } = deps;
  const flags = await readCampaignFields(redis, keys, id, CAMPAIGN_FLAGS);
  if (!flags.exists) throw new SluiceError('unknown_campaign', `no campaign with id ${id}`, { path: 'campaignId' });
  // Its messages are all final and its queue is gone: nothing to cancel.
  if (flags.archived) throw campaignArchivedError(id);
  // The flag's copies in the homes first (what a worker's mark reads), then the hash.
  await writePauseCopies(redis, keys, id, true);
  await redis.hset(keys.campaign(id), encodeCancel({ at: Date.now(), by: options.actor, reason: options.reason }));

  const campaignQueue = queues.campaign(id);
  // Every partition there is: a backend's cancel knows no `redis.dispatchPartitions`.
  const dispatch = (await Promise.all(PRIORITY_CLASSES.map((p) => queues.dispatchInUse(p)))).flat();
  const reply = `cancelled by ${options.actor}: ${options.reason}`;
  const result: CancelResult = {
    id,
    cancelled: 0,
    alreadyFinal: 0,
    removedJobs: 0,
    finishedInFlight: 0,
    stillInFlight: [],
  };
  const filling = createFillingBatches(redis, keys);
  const seen = new Set<string>();
  const inFlight = new Set<string>();

  /** Finalizes each message of the campaign found in `queue`, then removes its jobs. */
  async function sweep(queue: Queue, own: boolean): Promise<number> {
    const jobs: { jobId: string; messageIds: string[]; active: boolean }[] = [];
    for (const type of JOB_TYPES) {
      for (let start = 0; ; start += PAGE) {
        const page = await queue.getJobs([type], start, start + PAGE - 1, true);
        for (const job of page) {
          if (!job.id || job.data === undefined) continue;
          // A job of one message, or a block's or a batch's recipients.
          const ours = messagesOfJob(job.data as { id: string; campaignId?: string }).filter(
            (m) => typeof m.id === 'string' && (own || m.campaignId === id),
          );
          if (ours.length > 0)
            jobs.push({ jobId: job.id, messageIds: ours.map((m) => m.id), active: type === 'active' });
        }
        if (page.length < PAGE) break;
      }
    }
    for (const messageId of jobs.flatMap((j) => j.messageIds)) {
      if (seen.has(messageId) && !inFlight.has(messageId)) continue;
      seen.add(messageId);
      await end(messageId);
    }
    for (const { jobId, active } of jobs) {
      // Removal is tidying up: the record decides. A job locked by its worker stays.
      if (!active && (await queue.remove(jobId).catch(() => 0)) === 1) result.removedJobs++;
    }
    return jobs.length;
  }

  async function end(messageId: string): Promise<void> {
    if (await store.finalize(messageId, 'cancelled', { campaignId: id, reply, from: CANCELLABLE })) {
      if (inFlight.delete(messageId)) result.finishedInFlight++;
      result.cancelled++;
      return;
    }
    const { state } = await store.look(messageId, undefined);
    if (state !== null && IN_FLIGHT.has(state)) {
      inFlight.add(messageId);
      return;
    }
    if (inFlight.delete(messageId)) result.finishedInFlight++;
    else if (state !== null) result.alreadyFinal++;
  }

  /** Finalizes each message of the campaign in a dispatch batch a scheduler is filling; how many it had not seen. */
  async function sweepFilling(): Promise<number> {
    const ours = (await filling.all()).flatMap((b) => b.entries).filter((m) => m.campaignId === id && !seen.has(m.id));
    for (const m of ours) {
      seen.add(m.id);
      await end(m.id);
    }
    return ours.length;
  }

  await campaignQueue.pause();
  await sweep(campaignQueue, true);
  for (const q of dispatch) await sweep(q, false);
  await sweepFilling();

  const deadline = Date.now() + options.waitMs;
  while (inFlight.size > 0 && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, options.pollMs ?? 200));
    for (const messageId of [...inFlight]) await end(messageId);
  }
  // A held or retried send went back to the campaign's queue meanwhile, or a job moved between
  // the lists as they were read (a delayed one promoted to wait): sweep again until a sweep
  // finds none. Never a blind drain: it would delete the job of a message no sweep ended,
  // leaving its record short of a final state for good.
  // Likewise a recipient an admission under way put in a batch being filled.
  for (let round = 0; round < 5 && (await sweep(campaignQueue, true)) + (await sweepFilling()) > 0; round++);
  result.stillInFlight = [...inFlight];
  return result;
}
