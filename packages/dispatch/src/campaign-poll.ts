import type { Queue, Worker } from 'bullmq';
import type { Logger } from 'pino';
import type { Redis } from 'ioredis';
import type { Keys } from '@sluice/core';
import { createCampaignWork, type InjectionWindows, type Queues } from '@sluice/store';

/** What {@link createCampaignPoll} works with: the scheduler's own. */
export interface CampaignPollDeps {
  redis: Redis;
  keys: Keys;
  queues: Queues;
  windows: InjectionWindows;
  logger: Logger;
  /** A campaign's worker closes after its queue has been empty this long. */
  idleMs: number;
  /** Starts the scheduler's worker on a campaign queue (nothing once it is closing). */
  watch(queue: Queue): Worker | undefined;
}

/** A scheduler's campaign poll and the workers it keeps on campaign queues. */
export interface CampaignPoll {
  poll(): Promise<void>;
  /** Every campaign worker it started and has not closed. */
  workers(): Worker[];
  /** `old` was closed and `next` made in its place (the scheduler's watchdog): `next` is the campaign's now. */
  replaced(next: Worker, old: Worker): void;
}

/**
 * The campaign poll of one scheduler. Each poll reads only the campaigns with work
 * (`keys.campaignsWithWork()`, one ZRANGE) and those it watches, checked against the active set
 * (one SMISMEMBER), so its cost does not grow with idle or archived campaigns. A campaign whose
 * queue is empty is pruned from the set unless its mark moved meanwhile (writers mark after their
 * add: `createCampaignWork` of `@sluice/store`); its worker closes after `idleMs`. One that left
 * the active set (archived, deleted) is pruned without touching its queue (a handle would write
 * its meta again).
 */
export function createCampaignPoll(deps: CampaignPollDeps): CampaignPoll {
  const { redis, keys, queues, windows, logger } = deps;
  const work = createCampaignWork({ redis, keys });
  const idleSince = new Map<string, number>();
  const watched = new Map<string, Worker>();

  async function close(id: string): Promise<void> {
    const worker = watched.get(id);
    watched.delete(id);
    idleSince.delete(id);
    await worker?.close();
    // The handle goes too: a process polling many campaigns over its life keeps none of the idle ones'.
    await queues.drop(keys.campaignQueue(id));
  }

  async function pollOne(id: string, mark: number | undefined): Promise<void> {
    const queue = queues.campaign(id);
    const counts = await queue.getJobCounts('waiting', 'delayed', 'active', 'prioritized');
    const busy = Object.values(counts).some((n) => n > 0);
    await windows.update(id, Date.now());
    if (busy) {
      idleSince.delete(id);
      // Work no writer marked (one crashed between its add and its mark): marked for the others.
      if (mark === undefined) await work.mark([id]);
      if (!watched.has(id)) {
        const worker = deps.watch(queue);
        if (worker) {
          watched.set(id, worker);
          logger.info({ campaign: id }, 'watching campaign');
        }
      }
      return;
    }
    if (mark !== undefined) await work.prune(id, mark);
    if (!watched.has(id)) {
      await queues.drop(queue.name);
      return;
    }
    const since = idleSince.get(id) ?? Date.now();
    idleSince.set(id, since);
    if (Date.now() - since > deps.idleMs) {
      await close(id);
      logger.info({ campaign: id }, 'campaign idle; worker closed');
    }
  }

  return {
    async poll() {
      const marked = await work.read();
      const ids = [...new Set([...marked.keys(), ...watched.keys()])];
      if (ids.length === 0) return;
      const active = await redis.smismember(keys.campaigns(), ...ids);
      for (const [i, id] of ids.entries()) {
        const mark = marked.get(id);
        if (active[i] === 1) {
          await pollOne(id, mark);
          continue;
        }
        if (mark !== undefined) await work.prune(id, mark);
        await close(id);
      }
    },
    workers: () => [...watched.values()],
    replaced(next, old) {
      for (const [id, worker] of watched) if (worker === old) watched.set(id, next);
    },
  };
}
