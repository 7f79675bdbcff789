import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { FastifyAdapter } from '@bull-board/fastify';
import type { Queue } from 'bullmq';
import type { FastifyInstance } from 'fastify';
import type { Redis } from 'ioredis';
import { PRIORITY_CLASSES, SluiceError, type Keys, type ServiceLogger } from '@sluice/core';
import { readCampaignFlags, type Campaigns, type Queues } from '@sluice/store';

/**
 * A campaign's queue on the board. Its Pause and Resume are the campaign's (the lifecycle's:
 * flag and queue, as the client does), not only the BullMQ queue's: a queue-only pause would
 * stop admission but let mail already admitted go out. Resume refuses a cancelled campaign
 * (409, `campaign_cancelled`). Its name and state show in the display name.
 */
class CampaignQueueAdapter extends BullMQAdapter {
  label: string;
  constructor(
    queue: Queue,
    private readonly id: string,
    private readonly campaigns: Campaigns,
  ) {
    super(queue, { description: `campaign ${id}: Pause here pauses the campaign (its admitted mail too)` });
    this.label = `campaign ${id}`;
  }
  override getDisplayName(): string {
    return this.label;
  }
  override pause(): Promise<void> {
    return this.campaigns.pause(this.id, { actor: 'bull-board' });
  }
  override async resume(): Promise<void> {
    await this.campaigns.resume(this.id, { actor: 'bull-board' });
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
  // A campaign's queue is `{campaign-<id>}`, its braces percent-encoded in the path or not.
  /^\/api\/queues\/(?:%7B|\{)campaign-[^/]+(?:%7D|\})\/(pause|resume)$/i,
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
    super(queue, {
      description: 'Sluice moves these jobs itself: retry failed jobs here; hold traffic with `sluice override`',
    });
  }
  override pause(): Promise<void> {
    return Promise.resolve();
  }
  override resume(): Promise<void> {
    return Promise.resolve();
  }
}

/**
 * Bull Board's Resume all resumes queue after queue, and would stop at the first cancelled
 * campaign (its Resume is refused). Sluice answers it instead: every paused campaign on the
 * board is resumed and a cancelled one passed by, still paused, as the governor does. (The
 * class queues' Resume does nothing anyway.)
 */
function answerResumeAll(
  server: FastifyInstance,
  basePath: string,
  ids: () => string[],
  queues: Queues,
  campaigns: Campaigns,
): void {
  server.addHook('onRequest', async (req, reply) => {
    if (req.method !== 'PUT' || req.url.split('?')[0] !== `${basePath}/api/queues/resume`) return;
    for (const id of ids()) {
      if (await queues.campaign(id).isPaused())
        await campaigns.resume(id, { actor: 'bull-board', ifCancelled: 'skip' });
    }
    return reply.code(200).send({});
  });
}

/** What Bull Board's server adapter answers for an error. */
type BoardAnswer = ReturnType<Parameters<FastifyAdapter['setErrorHandler']>[0]>;

/**
 * The board's error answers, as Bull Board's own (a key and the message), except that a
 * refused Resume of a cancelled campaign is a 409 that says so.
 */
function boardError(err: Error & { statusCode?: number }): BoardAnswer {
  if (err instanceof SluiceError && err.code === 'campaign_cancelled') {
    return { status: 409, body: { error: { key: 'ERRORS.FORBIDDEN' }, code: err.code, message: err.message } };
  }
  const status = (err.statusCode || 500) as BoardAnswer['status'];
  return { status, body: { error: { key: 'ERRORS.INTERNAL_SERVER_ERROR' }, message: err.message } };
}

/**
 * Bull Board at `/board` over every Sluice queue, campaigns added as they appear. Its queue
 * handles are the app's (`createQueues`), closed with them.
 */
export interface Board {
  /** Reads the campaign set: adds new campaigns, names and states, mirrors pauses made elsewhere. */
  refresh(): Promise<void>;
}

export function registerBoard(
  server: FastifyInstance,
  deps: { redis: Redis; keys: Keys; queues: Queues; campaigns: Campaigns; logger: ServiceLogger; basePath?: string },
): Board {
  const { redis, keys, queues, campaigns, logger } = deps;
  const basePath = deps.basePath ?? '/board';
  const fixed = PRIORITY_CLASSES.flatMap((p) => [queues.intake(p), ...queues.dispatchAll(p)]);
  guardBoardWrites(server, basePath);
  const adapters = new Map<string, CampaignQueueAdapter>();
  answerResumeAll(server, basePath, () => [...adapters.keys()], queues, campaigns);
  const serverAdapter = new FastifyAdapter();
  serverAdapter.setBasePath(basePath);
  const board = createBullBoard({
    queues: fixed.map((q) => new ClassQueueAdapter(q)),
    serverAdapter,
    options: { uiConfig: { boardTitle: 'Sluice', miscLinks: [{ text: 'Dashboard', url: '/dashboard' }] } },
  });
  serverAdapter.setErrorHandler(boardError);
  void server.register(serverAdapter.registerPlugin(), { prefix: basePath });

  return {
    async refresh() {
      const ids = await campaigns.ids();
      for (const id of ids) {
        let adapter = adapters.get(id);
        if (!adapter) {
          adapter = new CampaignQueueAdapter(queues.campaign(id), id, campaigns);
          adapters.set(id, adapter);
          board.addQueue(adapter);
        }
        const [{ name, paused: flag, cancelled }, queuePaused] = await Promise.all([
          readCampaignFlags(redis, keys, [id]).then(([flags]) => flags!),
          queues.campaign(id).isPaused(),
        ]);
        // Paused by something that only knows BullMQ (another board, a script): made the
        // campaign's pause, so its admitted mail holds too.
        if (queuePaused && !flag && (await campaigns.adoptQueuePause(id))) {
          logger.info(
            { event: 'campaign_pause_mirrored', campaignId: id },
            'campaign queue was paused outside Sluice: campaign paused',
          );
        }
        const state = cancelled ? 'cancelled' : queuePaused || flag ? 'paused' : 'active';
        adapter.label = `campaign ${name && name !== id ? `${name} (${id})` : id} · ${state}`;
      }
      for (const [id, adapter] of adapters) {
        if (ids.includes(id)) continue;
        // Archived or deleted: its queue is gone, and so is this process's handle of it.
        board.removeQueue(adapter);
        adapters.delete(id);
        await queues.drop(keys.campaignQueue(id));
      }
    },
  };
}
