import type { Redis } from 'ioredis';
import { SluiceError, type Keys, type Message, type MessageOrigin, type QueuedMessage } from '@sluice/core';
import {
  campaignArchivedError,
  createCampaignWork,
  messageId,
  readCampaignFlags,
  type CampaignFlags,
  type Queues,
  type Store,
} from '@sluice/store';
import type { Deadline } from './deadline.js';

/** A validated message of a call, where it sits in the call (`[]`, or `['messages', i]`). */
export interface Parsed {
  message: Message;
  path: readonly PropertyKey[];
  /** The caller named a class: a campaign's class does not replace it. */
  priorityGiven: boolean;
  /** Where it came from over HTTP (`SendOptions.origin`). */
  origin?: MessageOrigin | undefined;
}

/** The result of `send`. */
export interface SendResult {
  /** The message id: look it up with `messages.status(id)`. */
  id: string;
  /** True when the idempotency key had been used: nothing was enqueued. */
  duplicate: boolean;
}

interface Item {
  message: QueuedMessage;
  queue: string;
  path: readonly PropertyKey[];
}

const at = (path: readonly PropertyKey[], field: string): string => [...path, field].join('.');

function cancelledError(id: string, path: string, recorded: boolean): SluiceError {
  const what = recorded
    ? 'it was cancelled while this message was being accepted: the message is recorded as cancelled and will not be sent'
    : 'it was cancelled, so it takes no more mail (nothing was written)';
  return new SluiceError('campaign_cancelled', `invalid message: ${path}: campaign ${id}: ${what}`, { path });
}

/** Writes validated messages: the one place the client enqueues. */
export function createIntake(deps: { redis: Redis; keys: Keys; store: Store; queues: Queues }) {
  const { redis, keys, store, queues } = deps;
  const work = createCampaignWork({ redis, keys });

  /**
   * The campaigns the messages name, read in one round trip (`readCampaignFlags`):
   * `unknown_campaign` or `campaign_cancelled` naming the first message of one, before
   * anything is written.
   */
  async function campaignsOf(parsed: readonly Parsed[]): Promise<Map<string, CampaignFlags>> {
    const ids = [...new Set(parsed.flatMap((p) => (p.message.campaignId === undefined ? [] : [p.message.campaignId])))];
    const rows = await readCampaignFlags(redis, keys, ids);
    const found = new Map<string, CampaignFlags>();
    ids.forEach((id, i) => {
      if (rows[i]!.exists) found.set(id, rows[i]!);
    });
    for (const { message, path } of parsed) {
      const id = message.campaignId;
      if (id === undefined) continue;
      const campaign = found.get(id);
      if (!campaign) {
        const where = at(path, 'campaignId');
        throw new SluiceError(
          'unknown_campaign',
          `invalid message: ${where}: no campaign with id ${id} (create it first)`,
          { path: where },
        );
      }
      if (campaign.archived) throw campaignArchivedError(id, at(path, 'campaignId'));
      if (campaign.cancelled) throw cancelledError(id, at(path, 'campaignId'), false);
    }
    return found;
  }

  /** Ids, acceptance times and queues: a campaign's mail takes its class unless the message names one. */
  function itemsOf(parsed: readonly Parsed[], campaigns: Map<string, CampaignFlags>): Item[] {
    return parsed.map(({ message: m, path, priorityGiven, origin }) => {
      const campaign = m.campaignId === undefined ? undefined : campaigns.get(m.campaignId);
      const priority = campaign && !priorityGiven ? campaign.priority : m.priority;
      const message: QueuedMessage = {
        ...m,
        priority,
        id: messageId(m.tenantId, m.idempotencyKey),
        acceptedAt: Date.now(),
        ...(origin !== undefined ? { origin } : {}),
      };
      const queue = m.campaignId !== undefined ? keys.campaignQueue(m.campaignId) : keys.intakeQueue(priority);
      return { message, queue, path };
    });
  }

  /** Which items name an existing record (a repeated idempotency key): random ids skip the lookup. */
  function existing(items: readonly Item[]): Promise<number[]> {
    return Promise.all(
      items.map(({ message }) =>
        message.idempotencyKey === undefined ? Promise.resolve(0) : store.exists(message.id).then(Number),
      ),
    );
  }

  /**
   * Job first, then record: a crash between them leaves a job whose record the scheduler
   * creates, never a record without a job. A repeat whose record exists enqueues nothing.
   * The deadline is checked before each write, so a call that already failed starts none.
   */
  async function write(items: Item[], found: readonly number[], deadline: Deadline): Promise<SendResult[]> {
    // The first occurrence of an id in the chunk that has no record yet is the one to enqueue.
    const seen = new Set<string>();
    const firsts = new Set<number>();
    items.forEach(({ message }, i) => {
      if (found[i] === 0 && !seen.has(message.id)) firsts.add(i);
      seen.add(message.id);
    });
    const fresh = items.filter((_, i) => firsts.has(i));
    const byQueue = new Map<string, QueuedMessage[]>();
    for (const { message, queue } of fresh) byQueue.set(queue, [...(byQueue.get(queue) ?? []), message]);
    for (const [queue, messages] of byQueue) {
      deadline.check();
      await queues.named(queue).addBulk(messages.map((m) => ({ name: 'send', data: m, opts: { jobId: m.id } })));
    }
    deadline.check();
    // A cancel (or an archive) may have landed since the campaigns were read: its flag is read
    // again in the records' round trip (sent with them, run after them). Set: the cancel's
    // sweep may have missed these messages, so they are ended here, and no message is left
    // never final. The campaigns are marked as having work after their jobs were added, so a
    // scheduler that found their queue empty meanwhile does not drop them (`createCampaignWork`).
    const campaignIds = [...new Set(fresh.flatMap(({ message: m }) => (m.campaignId ? [m.campaignId] : [])))];
    const [, flags] = await Promise.all([
      Promise.all(fresh.map(({ message }) => store.accept(message))),
      readCampaignFlags(redis, keys, campaignIds),
      work.mark(campaignIds),
    ]);
    const ended = (i: number): boolean => flags[i]!.cancelled || flags[i]!.archived;
    const cancelled = new Set(campaignIds.filter((_, i) => ended(i)));
    if (cancelled.size > 0)
      await endCancelled(fresh, cancelled, new Set(campaignIds.filter((_, i) => flags[i]!.archived)));
    return items.map(({ message }, i) => ({ id: message.id, duplicate: !firsts.has(i) }));
  }

  async function endCancelled(
    fresh: readonly Item[],
    cancelled: ReadonlySet<string>,
    archived: ReadonlySet<string>,
  ): Promise<never> {
    const hit = fresh.filter(({ message: m }) => m.campaignId !== undefined && cancelled.has(m.campaignId));
    for (const { message, queue } of hit) {
      await store.finalize(message.id, 'cancelled', {
        campaignId: message.campaignId,
        reply: 'campaign cancelled while the message was being accepted',
        from: ['queued', 'dispatched', 'retrying'],
      });
      // Tidying up: the final record is what keeps it from being sent.
      await queues
        .named(queue)
        .remove(message.id)
        .catch(() => 0);
    }
    const first = hit[0]!;
    if (archived.has(first.message.campaignId!))
      throw campaignArchivedError(first.message.campaignId!, at(first.path, 'campaignId'));
    throw cancelledError(first.message.campaignId!, at(first.path, 'campaignId'), true);
  }

  return {
    /** Refuses unknown and cancelled campaigns, then enqueues in chunks (each its own deadline). */
    async enqueue(
      parsed: readonly Parsed[],
      chunkSize: number,
      within: <T>(run: (deadline: Deadline) => Promise<T>) => Promise<T>,
    ): Promise<SendResult[]> {
      if (parsed.length <= chunkSize) {
        // One message or one chunk: the campaigns and the idempotency keys in one round trip.
        return within(async (deadline) => {
          const provisional = itemsOf(parsed, new Map());
          const [campaigns, found] = await Promise.all([campaignsOf(parsed), existing(provisional)]);
          return write(itemsOf(parsed, campaigns), found, deadline);
        });
      }
      const campaigns = await within(() => campaignsOf(parsed));
      const items = itemsOf(parsed, campaigns);
      const out: SendResult[] = [];
      for (let i = 0; i < items.length; i += chunkSize) {
        const chunk = items.slice(i, i + chunkSize);
        out.push(...(await within(async (deadline) => write(chunk, await existing(chunk), deadline))));
      }
      return out;
    },
  };
}
