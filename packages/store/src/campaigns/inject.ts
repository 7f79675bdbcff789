import type { Redis } from 'ioredis';
import {
  SluiceError,
  parseRecipient,
  recipientDomain,
  type Keys,
  type QueuedMessage,
  type Recipient,
  type InjectedFields,
} from '@sluice/core';
import { injectedId } from '../records/ids.js';
import type { Queues } from '../redis/queues.js';
import type { Store } from '../records/store.js';
import type { LaunchGate } from './launch-types.js';
import { campaignArchivedError } from './archive.js';
import { cancelledError, openWriter, type InjectCursor, type Item, type Target } from './inject-writer.js';

export { parseCursor, type InjectCursor } from './inject-writer.js';
import { fits, readWindow, type InjectWindow } from './inject-window.js';
import { CAMPAIGN_FLAGS } from './codec.js';
import { readCampaignFields } from './read.js';

/** Progress of an injection, reported after each chunk and while it waits. */
export interface InjectProgress {
  cursor: InjectCursor;
  /** Recipients accepted by this call. */
  accepted: number;
  /** Recipients this call skipped because they were accepted before (`from` behind the cursor). */
  skipped: number;
  /** Waiting for room: `window` (the campaign's window is full), `outcomes`, `launch`; undefined while writing. */
  waiting: 'window' | 'outcomes' | 'launch' | undefined;
  window: InjectWindow;
}

/** Options of `campaigns.inject`. */
export interface InjectOptions {
  /**
   * The position of the first recipient the iterable yields: `campaigns.status(id).cursor.position`
   * to resume. Behind the cursor, the recipients already accepted are skipped; ahead of it
   * is refused (`cursor_ahead`: the recipients between would never be sent). @defaultValue `0`
   */
  from?: number;
  /** Recipients written per Redis transaction. @defaultValue `500` */
  chunkSize?: number;
  /**
   * A recipient that fails validation: `'stop'` throws `invalid_recipient` naming it
   * (`recipients.<position>.to`), the cursor left at it; `'reject'` records it as `rejected`
   * with the reason and goes on. @defaultValue `'stop'`
   */
  invalid?: 'stop' | 'reject';
  /** Called after each chunk and each wait. */
  onProgress?: (progress: InjectProgress) => void;
  /** How often a full window is looked at again, ms. @defaultValue `200` */
  pollMs?: number;
  /** Stops the injection between chunks (what was written stays, the cursor says where). */
  signal?: AbortSignal;
}

/** The result of `campaigns.inject`. */
export interface InjectResult {
  cursor: InjectCursor;
  accepted: number;
  skipped: number;
  /** Of the accepted, ended at once: `rejected` (invalid, with `invalid: 'reject'`) and `expired` (a receiver the launch decision stopped). */
  rejected: number;
  expired: number;
}

/** What the injection needs of the rest of the client. */
export interface InjectDeps {
  redis: Redis;
  keys: Keys;
  queues: Queues;
  store: Store;
  /** The launch decision's gate. */
  gate(campaignId: string): Promise<LaunchGate>;
  /** True while the outcome stream is past its bound (a consumer behind): injection waits. @defaultValue never */
  outcomesFull?: () => Promise<boolean>;
  /** Runs one chunk's Redis work within the client's deadline. */
  within<T>(run: () => Promise<T>): Promise<T>;
  /**
   * Whether the fleet takes campaign jobs of many recipients (`block`, docs/design/batches.md),
   * asked before each chunk. @defaultValue never: one campaign job a recipient
   */
  blocks?: () => Promise<boolean>;
}

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    const t = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => {
      clearTimeout(t);
      resolve();
    });
  });

const DEFAULT_CHUNK = 500;

/** Creates the injection of one client. */
export function createInjection(deps: InjectDeps) {
  const { keys } = deps;

  async function target(id: string): Promise<Target> {
    const [campaign, content] = await deps.within(() =>
      Promise.all([readCampaignFields(deps.redis, keys, id, CAMPAIGN_FLAGS), deps.redis.get(keys.campaignContent(id))]),
    );
    if (!campaign.exists) throw unknownCampaign(id);
    if (campaign.archived) throw campaignArchivedError(id);
    if (campaign.cancelled) throw cancelledError(id);
    if (!content)
      throw new SluiceError(
        'campaign_no_content',
        `campaign ${id} has no content: create it with content to inject recipients (or send whole messages with send/sendBulk)`,
        { path: 'campaignId' },
      );
    const parsed = JSON.parse(content) as { from: QueuedMessage['from']; stream?: string };
    return {
      id,
      tenantId: campaign.tenantId,
      priority: campaign.priority,
      stream: parsed.stream ?? 'transactional',
      from: parsed.from,
    };
  }

  function messageOf(t: Target, position: number, r: Recipient, acceptedAt: number): QueuedMessage {
    const injected: InjectedFields = { position };
    if (r.key !== undefined) injected.key = r.key;
    if (r.data !== undefined && Object.keys(r.data).length > 0) injected.data = r.data;
    return {
      id: injectedId(t.id, position),
      to: r.to,
      from: t.from,
      priority: t.priority,
      stream: t.stream,
      tenantId: t.tenantId,
      campaignId: t.id,
      acceptedAt,
      injected,
    };
  }

  /** Parses one recipient into an item; an invalid one stops the call or ends `rejected`. */
  function itemOf(t: Target, position: number, input: unknown, opts: InjectOptions, gate: OpenGate): Item {
    const now = Date.now();
    try {
      const r = parseRecipient(input, position);
      const message = messageOf(t, position, r, now);
      const cursorValue = r.cursor === undefined ? undefined : String(r.cursor);
      const stopped = gate.stopped[recipientDomain(r.to)];
      if (stopped === undefined) return { position, message, cursorValue };
      return {
        position,
        message,
        cursorValue,
        end: { state: 'expired', reply: `not injected: ${stopped}`, outcome: 'launch' },
      };
    } catch (error) {
      if (opts.invalid !== 'reject' || !(error instanceof SluiceError) || error.code !== 'invalid_recipient')
        throw error;
      const to =
        typeof (input as { to?: unknown } | null)?.to === 'string' ? (input as { to: string }).to.slice(0, 254) : '';
      const message = messageOf(t, position, { to }, now);
      return {
        position,
        message,
        end: { state: 'rejected', reply: error.message.slice(0, 500), outcome: 'invalid_recipient' },
      };
    }
  }

  /** Waits until the gate is open and the window and the outcome stream have room; returns the open gate. */
  async function room(
    t: Target,
    start: number,
    count: number,
    opts: InjectOptions,
    report: (w: InjectProgress['waiting'], win: InjectWindow) => void,
  ): Promise<OpenGate> {
    const pollMs = opts.pollMs ?? 200;
    for (;;) {
      const [gate, win, outcomesFull] = await deps.within(() =>
        Promise.all([deps.gate(t.id), readWindow(deps.redis, keys, deps.queues, t.id), deps.outcomesFull?.() ?? false]),
      );
      if (gate.state === 'refused')
        throw new SluiceError(gate.code, `campaign ${t.id}: ${gate.reason}`, { path: 'campaignId' });
      // A split launch's next wave: its first position waits for the wave's start.
      const nextWave = gate.state === 'open' && gate.maxPosition !== undefined && start >= gate.maxPosition;
      const waiting =
        gate.state === 'wait' || nextWave
          ? 'launch'
          : !fits(win, count)
            ? 'window'
            : outcomesFull
              ? 'outcomes'
              : undefined;
      if (waiting === undefined && gate.state === 'open') return gate;
      report(waiting, win);
      if (opts.signal?.aborted) throw aborted(t.id);
      const until =
        gate.state === 'wait' ? gate.untilMs : gate.state === 'open' && nextWave ? gate.nextAtMs : undefined;
      await sleep(until === undefined ? pollMs : Math.min(Math.max(until - Date.now(), pollMs), 5_000), opts.signal);
    }
  }

  return {
    /**
     * Injects recipients (see `InjectOptions`): parsed and written in chunks, each chunk,
     * its records and the cursor in one transaction, never ahead of the window.
     */
    async inject(
      campaignId: string,
      recipients: Iterable<unknown> | AsyncIterable<unknown>,
      opts: InjectOptions = {},
    ): Promise<InjectResult> {
      const from = opts.from ?? 0;
      if (!Number.isSafeInteger(from) || from < 0)
        throw new SluiceError('invalid_argument', 'from: must be a non-negative integer (a cursor position)', {
          path: 'from',
        });
      const chunkSize = opts.chunkSize ?? DEFAULT_CHUNK;
      if (!Number.isSafeInteger(chunkSize) || chunkSize < 1 || chunkSize > 10_000)
        throw new SluiceError('invalid_argument', 'chunkSize: must be an integer from 1 to 10000', {
          path: 'chunkSize',
        });
      const t = await target(campaignId);
      const writer = await openWriter(deps, t.id);
      const result: InjectResult = { cursor: { position: from }, accepted: 0, skipped: 0, rejected: 0, expired: 0 };
      const progress = (waiting: InjectProgress['waiting'], window: InjectWindow): void =>
        opts.onProgress?.({
          cursor: result.cursor,
          accepted: result.accepted,
          skipped: result.skipped,
          waiting,
          window,
        });
      try {
        let cursor = await deps.within(() => writer.cursor());
        if (from > cursor.position) throw cursorAhead(t.id, from, cursor.position);
        result.cursor = cursor;
        let position = from;
        let chunk: unknown[] = [];
        /** Writes the chunk, in parts where a wave of a split launch ends. */
        const flush = async (): Promise<void> => {
          while (chunk.length > 0) {
            const gate = await room(t, position, chunk.length, opts, progress);
            const n =
              gate.maxPosition === undefined ? chunk.length : Math.min(chunk.length, gate.maxPosition - position);
            // A recipient that fails validation stops the call there, the ones before it written.
            const items: Item[] = [];
            let failure: Error | undefined;
            for (let i = 0; i < n && failure === undefined; i++) {
              try {
                items.push(itemOf(t, position + i, chunk[i], opts, gate));
              } catch (error) {
                failure = error instanceof Error ? error : new Error(String(error));
              }
            }
            if (items.length > 0) {
              const blocks = deps.blocks === undefined ? false : await deps.within(deps.blocks);
              const written = await writer.write(t, items, cursor, (run) => deps.within(run), blocks);
              result.accepted += written.accepted;
              result.skipped += items.length - written.accepted;
              for (const item of items.slice(items.length - written.accepted)) if (item.end) result[item.end.state]++;
              position += items.length;
              cursor = written.cursor;
              result.cursor = cursor;
              chunk = chunk.slice(items.length);
              progress(undefined, written.window);
            }
            if (failure !== undefined) throw failure;
          }
        };
        try {
          for await (const input of recipients) {
            if (opts.signal?.aborted) break;
            // Recipients before the cursor were accepted by an earlier call: skipped, not parsed.
            if (position < cursor.position) {
              position++;
              result.skipped++;
              continue;
            }
            chunk.push(input);
            if (chunk.length >= chunkSize) await flush();
          }
        } catch (error) {
          // The source failed (a line that is not JSON, a database gone): what it gave before is written.
          await flush();
          throw error;
        }
        if (opts.signal?.aborted) throw aborted(t.id);
        await flush();
        return result;
      } finally {
        await writer.close();
      }
    },
  };
}

type OpenGate = Extract<LaunchGate, { state: 'open' }>;

const unknownCampaign = (id: string): SluiceError =>
  new SluiceError('unknown_campaign', `no campaign with id ${id} (create it first)`, { path: 'campaignId' });
const aborted = (id: string): SluiceError =>
  new SluiceError(
    'aborted',
    `injection into campaign ${id} was stopped (its signal was aborted): resume from its cursor`,
    {
      path: 'signal',
    },
  );
const cursorAhead = (id: string, from: number, at: number): SluiceError =>
  new SluiceError(
    'cursor_ahead',
    `from: ${from} is ahead of campaign ${id}'s cursor (${at}): the recipients between were never accepted; resume from ${at}`,
    { path: 'from' },
  );
