import { Job } from 'bullmq';
import type { Redis } from 'ioredis';
import {
  BLOCK_JOB,
  COMPACT_BLOCK,
  SluiceError,
  blockJobIdOf,
  type Keys,
  type PriorityClass,
  type QueuedMessage,
} from '@sluice/core';
import { campaignArchivedError } from './archive.js';
import { CAMPAIGN_BLOCKS_FIELD, CAMPAIGN_FLAGS } from './codec.js';
import { readWindow } from './inject-window.js';
import { createCampaignWork } from './work.js';
import { defineScripts, type StoreRedis } from '../redis/scripts.js';
import { createQueues, type Queues } from '../redis/queues.js';
import { acceptArgs, finalizeArgs } from '../records/args.js';
import type { Store } from '../records/store.js';

/** Where an injection stands: every recipient before `position` is accepted (recorded). */
export interface InjectCursor {
  /** The position of the next recipient to inject (0-based): the count accepted so far. */
  position: number;
  /** The backend's `cursor` value of the last recipient accepted, if it gave one. */
  value?: string | undefined;
}

/** Reads a stored cursor (`<position>|<value>`). */
export function parseCursor(raw: string | null): InjectCursor {
  if (!raw) return { position: 0 };
  const bar = raw.indexOf('|');
  const position = Number(bar < 0 ? raw : raw.slice(0, bar));
  const value = bar < 0 ? '' : raw.slice(bar + 1);
  return value === '' ? { position } : { position, value };
}

/** A campaign as an injection needs it. */
export interface Target {
  id: string;
  tenantId: string;
  priority: PriorityClass;
  stream: string;
  from: QueuedMessage['from'];
}

/** One recipient of a chunk, parsed, with what becomes of it. */
export interface Item {
  position: number;
  message: QueuedMessage;
  /** `queued` (a job), or ended at once: `rejected` (invalid) or `expired` (its receiver stopped). */
  end?: { state: 'rejected' | 'expired'; reply: string; outcome: string };
  cursorValue?: string | undefined;
}

export const cancelledError = (id: string): SluiceError =>
  new SluiceError('campaign_cancelled', `campaign ${id} was cancelled, so it takes no more mail`, {
    path: 'campaignId',
  });

/** What the writer needs of the injection's collaborators. */
export interface WriterDeps {
  redis: Redis;
  keys: Keys;
  queues: Queues;
  store: Store;
  within<T>(run: () => Promise<T>): Promise<T>;
}

/**
 * The chunk writer: a connection of its own (WATCH needs one), on which BullMQ's and the
 * store's scripts are defined. A chunk's records go to their homes first, then its jobs and the
 * cursor in one MULTI under the campaign's hash tag (docs/design/campaigns.md).
 */
export async function openWriter(deps: WriterDeps, campaignId: string) {
  const { keys } = deps;
  const conn = deps.redis.duplicate();
  conn.on('error', () => undefined);
  const raw = defineScripts(conn);
  const queues = createQueues({ redis: conn, keys });
  const queue = queues.campaign(campaignId);
  // BullMQ's proxy of `conn`: its MULTI takes BullMQ's job scripts (`Job.addJob`) and ours.
  const client = (await queue.backend.client) as unknown as StoreRedis;
  const cursorKey = keys.campaignCursor(campaignId);
  const work = createCampaignWork({ redis: conn, keys });

  return {
    async cursor(): Promise<InjectCursor> {
      return parseCursor(await raw.get(cursorKey));
    },
    /**
     * Writes the items not yet accepted. The cursor is WATCHed: a second producer that moved
     * it meanwhile makes the MULTI fail, and the chunk is looked at again from the new cursor.
     */
    async write(t: Target, items: Item[], expected: InjectCursor, within: WriterDeps['within'], blocks = false) {
      for (;;) {
        const done = await within(async () => {
          await client.watch(cursorKey);
          const now = parseCursor(await client.get(cursorKey));
          const first = items[0]!.position;
          if (now.position < first) {
            // Behind this chunk: Redis lost writes it had acknowledged (a restart with
            // `appendfsync everysec`). Writing on would leave the positions between unsent.
            await client.unwatch();
            throw new SluiceError(
              'cursor_ahead',
              `campaign ${t.id}'s cursor is at ${now.position}, behind this injection's ${first} (Redis lost writes): resume from ${now.position}`,
              { path: 'from', action: 'transient' },
            );
          }
          const fresh = items.filter((item) => item.position >= now.position);
          if (now.position > first + items.length || fresh.length === 0) {
            await client.unwatch();
            return { cursor: now, accepted: 0 };
          }
          const last = fresh[fresh.length - 1]!;
          const value = last.cursorValue ?? (now.position === first ? expected.value : now.value) ?? '';
          // The records first, each in its own home (no MULTI spans the homes and the campaign's
          // queue): a crash before the MULTI leaves records the producer's resume finds again
          // (accept keeps the first) and gives their jobs then, since the cursor did not move.
          await writeRecords(raw, deps, t, fresh);
          // Marked before the jobs and again after them: no scheduler prunes it as idle meanwhile.
          await work.mark([t.id]);
          const multi = client.multi();
          for (const group of jobGroups(fresh, blocks)) {
            const [one] = group;
            const [name, data, jobId] =
              group.length === 1 && one !== undefined
                ? ['send', one, one.id]
                : [BLOCK_JOB, { block: group }, blockJobIdOf(group)];
            const opts = { ...queue.defaultJobOptions, jobId };
            void new Job(queue, name, data, opts, jobId).addJob(multi as never);
          }
          // A campaign written in blocks: its window counts a waiting job as a block's recipients.
          if (blocks) multi.hset(keys.campaign(t.id), CAMPAIGN_BLOCKS_FIELD, '1');
          multi.set(cursorKey, `${last.position + 1}|${value}`);
          multi.hmget(keys.campaign(t.id), ...CAMPAIGN_FLAGS.fields);
          const replies = await multi.exec();
          if (replies === null) return undefined;
          for (const [err] of replies) if (err) throw err;
          await work.mark([t.id]);
          const flags = CAMPAIGN_FLAGS.decode(replies[replies.length - 1]![1] as (string | null)[]);
          const { archived } = flags;
          const cancelled = flags.cancelled || archived;
          return {
            cursor: parseCursor(`${last.position + 1}|${value}`),
            accepted: fresh.length,
            cancelled,
            archived,
            fresh,
          };
        });
        if (done === undefined) continue;
        if ('cancelled' in done && done.cancelled) {
          await endCancelled(deps, t, done.fresh);
          throw done.archived ? campaignArchivedError(t.id) : cancelledError(t.id);
        }
        const window = await within(() => readWindow(deps.redis, keys, deps.queues, t.id));
        return { cursor: done.cursor, accepted: done.accepted, window };
      }
    },
    /** Closes its connection; one that is not up (Redis away) is dropped, not waited for. */
    async close() {
      if (conn.status !== 'ready') {
        conn.disconnect();
        await queues.close().catch(() => undefined);
        return;
      }
      await queues.close();
      await conn.quit().catch(() => conn.disconnect());
    },
  };
}

/**
 * The campaign jobs of a chunk's recipients that are not ended at once: one each, or with
 * `blocks` one a run of positions in one compact block (`COMPACT_BLOCK`: one message home).
 */
function jobGroups(items: readonly Item[], blocks: boolean): QueuedMessage[][] {
  const groups: QueuedMessage[][] = [];
  let block = -1;
  for (const item of items) {
    if (item.end) continue;
    const at = Math.floor(item.position / COMPACT_BLOCK);
    if (blocks && at === block) groups[groups.length - 1]!.push(item.message);
    else groups.push([item.message]);
    block = at;
  }
  return groups;
}

/**
 * A cancel that landed while a chunk was written (its flag read in the chunk's own MULTI):
 * its sweep may have passed these, so they are ended here, none left in a paused queue.
 */
async function endCancelled(deps: WriterDeps, t: Target, items: readonly Item[]): Promise<void> {
  for (const { message } of items) {
    await deps.store.finalize(message.id, 'cancelled', {
      campaignId: t.id,
      reply: 'campaign cancelled while the recipient was being injected',
      from: ['queued', 'dispatched', 'retrying'],
    });
  }
  // Their jobs: one each, or the blocks that hold them.
  const queue = deps.queues.campaign(t.id);
  const ids = new Set(jobGroups(items, true).flatMap((g) => [blockJobIdOf(g), ...g.map((m) => m.id)]));
  for (const id of ids) await queue.remove(id).catch(() => 0);
}

/**
 * Accepts a chunk's records (and ends the ones that end at once), concurrently: one script
 * each, in its home. Both scripts keep what is there, so a chunk written again changes nothing.
 */
async function writeRecords(redis: StoreRedis, deps: WriterDeps, t: Target, items: readonly Item[]): Promise<void> {
  const { keys, store } = deps;
  await Promise.all(
    items.map(async (item) => {
      await redis.sluiceAccept(...acceptArgs(keys, item.message));
      if (!item.end) return;
      const { state, reply, outcome } = item.end;
      await redis.sluiceFinalize(
        ...finalizeArgs(
          keys,
          store.recordTtlSeconds,
          item.message.id,
          state,
          { campaignId: t.id, reply, outcome },
          Date.now(),
        ),
      );
    }),
  );
}
