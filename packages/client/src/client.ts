import type { Redis } from 'ioredis';
import {
  SluiceError,
  createKeys,
  parseMessage,
  type Keys,
  type MessageInput,
  type PriorityClass,
  type QueuedMessage,
} from '@sluice/core';
import {
  connectRedis,
  createCampaigns,
  createQueues,
  createStore,
  messageId,
  type AttemptEntry,
  type MessageRecord,
  type Store,
} from '@sluice/store';
import { clientCampaigns, type Campaigns } from './campaigns.js';
import { createClientSuppressions, type ClientSuppressions } from './suppressions.js';

/** Options of {@link createClient}. */
export interface ClientOptions {
  /** A Redis URL (the client opens and closes its own connection) or a connection of yours. */
  redis: string | Redis;
  /** Key namespace; must match the fleet's `redis.prefix`. @defaultValue `'sluice'` */
  prefix?: string;
  /** `sendBulk` writes this many messages per Redis transaction. @defaultValue `1000` */
  chunkSize?: number;
}

/** The result of `send`. */
export interface SendResult {
  /** The message id: look it up with `messages.status(id)`. */
  id: string;
  /** True when the idempotency key had been used: nothing was enqueued. */
  duplicate: boolean;
}

/** Message lookups. */
export interface Messages {
  /** State, attempts and last reply; null if unknown or expired from the records. */
  status(id: string): Promise<MessageRecord | null>;
  /**
   * Its attempt log, oldest first: every attempt that was not accepted at once, with the
   * full reply, its family and the classifier version that read it; every ambiguous one
   * (outcome `ambiguous`: submitted, never answered) with what was done. Empty for a message
   * sent on its first attempt (the record says all) or not tried yet.
   */
  attempts(id: string): Promise<AttemptEntry[]>;
  /**
   * Cancels a message that has not started sending; false if it is already final or a
   * worker is sending it (it then ends as that attempt says).
   */
  cancel(id: string): Promise<boolean>;
}

/** What backends use to enqueue mail and control campaigns. */
export interface SluiceClient {
  /** Validates and enqueues one message. Invalid input throws naming the field; nothing is written. */
  send(message: MessageInput): Promise<SendResult>;
  /** Validates every message first (errors name `messages.<i>.<field>`), then enqueues in chunks. */
  sendBulk(messages: readonly MessageInput[]): Promise<SendResult[]>;
  readonly campaigns: Campaigns;
  readonly messages: Messages;
  /** A tenant's suppressed addresses: list, look up, add by hand, remove. */
  readonly suppressions: ClientSuppressions;
  /** Closes queues, and the connection if the client opened it. */
  close(): Promise<void>;
}

/** Creates a client. */
export function createClient(options: ClientOptions): SluiceClient {
  const ownsRedis = typeof options.redis === 'string';
  const redis =
    // connectRedis: a library prints nothing (ioredis would print each failed attempt); the
    // commands reject instead.
    typeof options.redis === 'string' ? connectRedis(options.redis, { maxRetriesPerRequest: 3 }) : options.redis;
  const keys: Keys = createKeys(options.prefix);
  const chunkSize = options.chunkSize ?? 1000;
  const store: Store = createStore({ redis, keys });
  const queues = createQueues({ redis, keys });
  const campaigns = clientCampaigns(createCampaigns({ redis, keys, queues, store }));
  const knownCampaigns = new Map<string, PriorityClass>();
  let closed = false;

  function check(): void {
    if (closed) throw new SluiceError('closed', 'the client is closed');
  }

  async function validate(input: unknown, path: PropertyKey[]): Promise<{ message: QueuedMessage; queue: string }> {
    const m = parseMessage(input, path);
    if (m.campaignId !== undefined) {
      let priority = knownCampaigns.get(m.campaignId);
      if (priority === undefined) {
        const campaign = await campaigns.get(m.campaignId);
        if (!campaign) {
          const at = [...path, 'campaignId'].join('.');
          throw new SluiceError(
            'unknown_campaign',
            `invalid message: ${at}: no campaign with id ${m.campaignId} (create it first)`,
            { path: at },
          );
        }
        priority = campaign.priority;
        knownCampaigns.set(m.campaignId, priority);
      }
      // A campaign's mail takes the campaign's class unless the message names one.
      if ((input as { priority?: unknown }).priority === undefined) m.priority = priority;
    }
    const message: QueuedMessage = { ...m, id: messageId(m.tenantId, m.idempotencyKey), acceptedAt: Date.now() };
    const queue = m.campaignId !== undefined ? keys.campaignQueue(m.campaignId) : keys.intakeQueue(m.priority);
    return { message, queue };
  }

  /**
   * Job first, then record: a crash between them leaves a job whose record the scheduler
   * creates, never a record without a job. A repeat whose record exists enqueues nothing.
   */
  async function enqueue(batch: { message: QueuedMessage; queue: string }[]): Promise<SendResult[]> {
    // Only an idempotency key can name an existing message; random ids skip the lookup.
    const existing = await Promise.all(
      batch.map(({ message }) =>
        message.idempotencyKey === undefined ? Promise.resolve(0) : redis.exists(keys.message(message.id)),
      ),
    );
    // The first occurrence of an id in the batch that has no record yet is the one to enqueue.
    const seen = new Set<string>();
    const firsts = new Set<number>();
    batch.forEach(({ message }, i) => {
      if (existing[i] === 0 && !seen.has(message.id)) firsts.add(i);
      seen.add(message.id);
    });
    const fresh = batch.filter((_, i) => firsts.has(i));
    const byQueue = new Map<string, QueuedMessage[]>();
    for (const { message, queue } of fresh) {
      const list = byQueue.get(queue) ?? [];
      list.push(message);
      byQueue.set(queue, list);
    }
    for (const [queue, messages] of byQueue) {
      await queues.named(queue).addBulk(messages.map((m) => ({ name: 'send', data: m, opts: { jobId: m.id } })));
    }
    // A scheduler may already have taken a job and written its record (it does when it finds
    // none); either way the message is new to this caller, so `duplicate` is decided above.
    await Promise.all(fresh.map(({ message }) => store.accept(message)));
    return batch.map(({ message }, i) => ({ id: message.id, duplicate: !firsts.has(i) }));
  }

  return {
    campaigns,
    suppressions: createClientSuppressions(redis, keys, check),
    async send(input) {
      check();
      const item = await validate(input, []);
      const [result] = await enqueue([item]);
      return result!;
    },
    async sendBulk(inputs) {
      check();
      if (!Array.isArray(inputs)) {
        throw new SluiceError('invalid_argument', 'sendBulk takes an array of messages', { path: 'messages' });
      }
      const items = [];
      for (let i = 0; i < inputs.length; i++) items.push(await validate(inputs[i], ['messages', i]));
      const out: SendResult[] = [];
      for (let i = 0; i < items.length; i += chunkSize) out.push(...(await enqueue(items.slice(i, i + chunkSize))));
      return out;
    },
    messages: {
      status: (id) => store.get(id),
      attempts: (id) => store.attempts(id),
      async cancel(id) {
        const record = await store.get(id);
        if (!record) return false;
        return store.finalize(id, 'cancelled', {
          campaignId: record.campaignId,
          reply: 'cancelled by the client',
          from: ['queued', 'dispatched', 'retrying'],
        });
      },
    },
    async close() {
      if (closed) return;
      closed = true;
      await queues.close();
      if (ownsRedis) await redis.quit();
    },
  };
}
