import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { FastifyAdapter } from '@bull-board/fastify';
import { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import type { FastifyInstance } from 'fastify';
import { PRIORITY_CLASSES, QUEUE_OPTIONS, SluiceError, type Keys, type ServiceLogger } from '@sluice/core';
import type { Store } from '@sluice/store';

/** Pausing and resuming campaigns the way `@sluice/client` does: the store's flag and the queue. */
export interface CampaignControl {
  /** The flag stops admitted mail at the workers; the queue pause stops admission. */
  pause(id: string, actor: string): Promise<void>;
  resume(id: string, actor: string): Promise<void>;
  queue(id: string): Queue;
  close(): Promise<void>;
}

export function createCampaignControl(deps: { redis: Redis; keys: Keys; store: Store; logger: ServiceLogger }): CampaignControl {
  const { redis, keys, store, logger } = deps;
  const queues = new Map<string, Queue>();
  const queue = (id: string): Queue => {
    let q = queues.get(id);
    if (!q) {
      q = new Queue(keys.campaignQueue(id), { ...QUEUE_OPTIONS, connection: redis, prefix: keys.prefix });
      queues.set(id, q);
    }
    return q;
  };
  const mustExist = async (id: string): Promise<void> => {
    if (!(await redis.hexists(keys.campaign(id), 'createdAt'))) {
      throw new SluiceError('unknown_campaign', `no campaign with id ${id}`, { path: 'campaignId' });
    }
  };
  return {
    queue,
    async pause(id, actor) {
      await mustExist(id);
      await store.setCampaignPaused(id, true);
      await queue(id).pause();
      logger.info({ event: 'campaign_paused', campaignId: id, actor }, 'campaign paused');
    },
    async resume(id, actor) {
      await mustExist(id);
      await queue(id).resume();
      await store.setCampaignPaused(id, false);
      logger.info({ event: 'campaign_resumed', campaignId: id, actor }, 'campaign resumed');
    },
    async close() {
      for (const q of queues.values()) await q.close();
      queues.clear();
    },
  };
}

/**
 * A campaign's queue on the board. Its Pause and Resume are the campaign's (flag and queue,
 * as the client does), not only the BullMQ queue's: a queue-only pause would stop admission
 * but let mail already admitted go out. Its name and state show in the display name.
 */
class CampaignQueueAdapter extends BullMQAdapter {
  label: string;
  constructor(
    queue: Queue,
    private readonly id: string,
    private readonly control: CampaignControl,
  ) {
    super(queue, { description: `campaign ${id}: Pause here pauses the campaign (its admitted mail too)` });
    this.label = `campaign ${id}`;
  }
  override getDisplayName(): string {
    return this.label;
  }
  override pause(): Promise<void> {
    return this.control.pause(this.id, 'bull-board');
  }
  override resume(): Promise<void> {
    return this.control.resume(this.id, 'bull-board');
  }
}

/**
 * The only changes the board may make: pausing and resuming campaigns (one, or all: the
 * campaign's pause, above), and retrying failed jobs. A retried job takes the normal path,
 * where a message already final is never sent again. Every other write Bull Board offers
 * (add, promote, clean, empty, obliterate, edit a job, rate limits, concurrency, retrying
 * completed jobs) would move or drop jobs behind Sluice's back: a removed job is a message
 * that never reaches a final state, a promoted one skips its quota. Those are refused with
 * 405. A class queue (intake or dispatch) is not paused here either: `sluice override` holds
 * traffic, and ends by itself.
 */
const BOARD_WRITES = [
  /^\/api\/queues\/(pause|resume)$/,
  /^\/api\/queues\/campaign-[^/]+\/(pause|resume)$/,
  /^\/api\/queues\/[^/]+\/retry\/failed$/,
  /^\/api\/queues\/[^/]+\/[^/]+\/retry$/,
];

/** Refuses every board request that writes, except those in {@link BOARD_WRITES}. */
function guardBoardWrites(server: FastifyInstance, basePath: string): void {
  server.addHook('onRequest', async (req, reply) => {
    const path = req.url.split('?')[0]!;
    if (req.method === 'GET' || req.method === 'HEAD' || !path.startsWith(`${basePath}/api/`)) return;
    if (BOARD_WRITES.some((allowed) => allowed.test(path.slice(basePath.length)))) return;
    await reply.code(405).send({
      error: { key: 'ERRORS.QUEUE_READ_ONLY' },
      message:
        'the board pauses and resumes campaigns and retries failed jobs, nothing else: removing, cleaning or moving jobs would leave messages without a final state. ' +
        'Cancel a campaign with `sluice campaigns cancel <id>`, a message with `client.messages.cancel(id)`; hold traffic with `sluice override` (it expires by itself).',
    });
  });
}

/**
 * An intake or dispatch queue on the board: inspected, and its failed jobs retried. Pause
 * all passes it by (the guard refuses pausing it alone): pausing a whole class would be a
 * setting with no end, where an override expires.
 */
class ClassQueueAdapter extends BullMQAdapter {
  constructor(queue: Queue) {
    super(queue, { description: 'Sluice moves these jobs itself: retry failed jobs here; hold traffic with `sluice override`' });
  }
  override pause(): Promise<void> {
    return Promise.resolve();
  }
  override resume(): Promise<void> {
    return Promise.resolve();
  }
}

/** Bull Board at `/board` over every Sluice queue, campaigns added as they appear. */
export interface Board {
  /** Reads the campaign set: adds new campaigns, names and states, mirrors pauses made elsewhere. */
  refresh(): Promise<void>;
  close(): Promise<void>;
}

export function registerBoard(
  server: FastifyInstance,
  deps: { redis: Redis; keys: Keys; store: Store; control: CampaignControl; logger: ServiceLogger; basePath?: string },
): Board {
  const { redis, keys, store, control, logger } = deps;
  const basePath = deps.basePath ?? '/board';
  const fixed = PRIORITY_CLASSES.flatMap((p) => [keys.intakeQueue(p), keys.dispatchQueue(p)]).map(
    (name) => new Queue(name, { ...QUEUE_OPTIONS, connection: redis, prefix: keys.prefix }),
  );
  guardBoardWrites(server, basePath);
  const serverAdapter = new FastifyAdapter();
  serverAdapter.setBasePath(basePath);
  const board = createBullBoard({
    queues: fixed.map((q) => new ClassQueueAdapter(q)),
    serverAdapter,
    options: { uiConfig: { boardTitle: 'Sluice', miscLinks: [{ text: 'Dashboard', url: '/dashboard' }] } },
  });
  void server.register(serverAdapter.registerPlugin(), { prefix: basePath });
  const campaigns = new Map<string, CampaignQueueAdapter>();

  return {
    async refresh() {
      const ids = (await redis.smembers(keys.campaigns())).sort();
      for (const id of ids) {
        let adapter = campaigns.get(id);
        if (!adapter) {
          adapter = new CampaignQueueAdapter(control.queue(id), id, control);
          campaigns.set(id, adapter);
          board.addQueue(adapter);
        }
        const [[name, flag], queuePaused] = await Promise.all([redis.hmget(keys.campaign(id), 'name', 'paused'), control.queue(id).isPaused()]);
        if (queuePaused && flag !== '1') {
          // Paused by something that only knows BullMQ (another board, a script): make it the
          // campaign's pause, so its admitted mail holds too.
          await store.setCampaignPaused(id, true);
          logger.info({ event: 'campaign_pause_mirrored', campaignId: id }, 'campaign queue was paused outside Sluice: campaign paused');
        }
        const paused = queuePaused || flag === '1';
        adapter.label = `campaign ${name && name !== id ? `${name} (${id})` : id} · ${paused ? 'paused' : 'active'}`;
      }
      for (const [id, adapter] of campaigns) {
        if (ids.includes(id)) continue;
        board.removeQueue(adapter);
        campaigns.delete(id);
      }
    },
    async close() {
      for (const q of fixed) await q.close();
    },
  };
}
