import type { Cluster, Redis } from 'ioredis';
import { SluiceError, createKeys, parseMessage, type Keys, type MessageInput, type MessageOrigin } from '@sluice/core';
import {
  connectRedis,
  createCampaigns,
  createInjection,
  createQueues,
  createStore,
  type AttemptEntry,
  type FleetView,
  type MessageRecord,
  type Store,
} from '@sluice/store';
import { clientCampaigns, type Campaigns } from './campaigns.js';
import { createGuard, type Deadline, type Guard } from './deadline.js';
import { createFleetWatch, type FleetCheck } from './fleet-check.js';
import { createIntake, type Parsed, type SendResult } from './intake.js';
import { createReplicaWait, type ReplicasOption } from './replicas.js';
import { clientOutcomes, type ClientOutcomes } from './outcomes.js';
import { createClientSuppressions, type ClientSuppressions } from './suppressions.js';

export type { SendResult } from './intake.js';
export type { ReplicasOption } from './replicas.js';

/** Options of {@link createClient}. */
export interface ClientOptions {
  /**
   * A Redis URL (the client opens and closes its own connection), or a connection of yours:
   * an ioredis `Redis`, or a `Cluster` for a fleet whose `redis.queues` is a Redis Cluster
   * (docs/operations/running-a-fleet.md gives its options).
   */
  redis: string | Redis | Cluster;
  /** Key namespace; must match the fleet's `redis.prefix`. @defaultValue `'sluice'` */
  prefix?: string;
  /** `sendBulk` writes this many messages per Redis transaction. @defaultValue `1000` */
  chunkSize?: number;
  /**
   * How long a call may wait for Redis before it fails with `redis_unavailable` (action
   * `transient`): `send` and every other call as a whole, `sendBulk` each chunk. A send that
   * failed so may still have been written (its command can run once Redis answers again):
   * retry it with the same `idempotencyKey`, which makes the retry a no-op if it was.
   * @defaultValue `5000`
   */
  timeoutMs?: number;
  /**
   * Before `send` (and each chunk of `sendBulk`) answers, wait until this many replicas of the
   * masters it wrote to have the mail (Redis `WAIT`): a failover then loses no acknowledged
   * send (docs/design/state-and-owners.md, "Failover"). Fewer within `timeoutMs` (below the
   * client's own): `redis_unavailable`; the mail is written and goes, so retry with the same
   * `idempotencyKey`. Costs a round trip per master a call. @defaultValue none: the master's answer
   */
  replicas?: ReplicasOption;
  /**
   * The outcome stream (`client.outcomes`). `claimIdleMs`: an event a consumer left
   * unacknowledged this long is claimed by another's `read` (the first died).
   * `maxBacklog`: the fleet's `outcomes.maxBacklog` (the client has no fleet config).
   * @defaultValue `{ claimIdleMs: 60_000, maxBacklog: 250_000 }`
   */
  outcomes?: { claimIdleMs?: number; maxBacklog?: number };
  /**
   * The first call that writes mail (`send`, `sendBulk`, `campaigns.create`, `campaigns.inject`)
   * looks for the fleet's heartbeat under `prefix`: with `'error'` no fleet there is a
   * `no_fleet` error (transient: nothing written) and a fleet of another store schema a
   * `fleet_incompatible` one; `'warn'` hands those to `onWarning` and accepts the mail (it
   * waits until a fleet runs); `'off'` does not look. Mail accepted while no scheduler runs is
   * counted (`sluice status`) and warned of once, unless `'off'`.
   * @defaultValue `'error'`
   */
  fleetCheck?: FleetCheck;
  /**
   * Where the fleet check's warnings go (`no_fleet`, `fleet_incompatible`, `no_scheduler`).
   * @defaultValue `process.emitWarning` (type `SluiceWarning`, the error's code)
   */
  onWarning?: (warning: SluiceError) => void;
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

/** Options of `send` and `sendBulk`. */
export interface SendOptions {
  /**
   * Where the mail came from over HTTP, recorded on each message (`messages.status(id).origin`):
   * the HTTP ingest sets it to the request's API key and address. A backend sends none.
   */
  origin?: MessageOrigin;
}

/** An origin's key id (an API key id) and source address (at most 64 characters, as an IPv6 address with its zone). */
const ORIGIN_KEY = /^[A-Za-z0-9_-]{1,64}$/;

/** Throws `invalid_argument` naming the field unless `origin` is one. */
function checkOrigin(origin: MessageOrigin | undefined): void {
  if (origin === undefined) return;
  if (typeof origin.keyId !== 'string' || !ORIGIN_KEY.test(origin.keyId)) {
    throw new SluiceError('invalid_argument', 'origin.keyId: must match [A-Za-z0-9_-]{1,64}', { path: 'origin.keyId' });
  }
  if (typeof origin.source !== 'string' || origin.source.length === 0 || origin.source.length > 64) {
    throw new SluiceError('invalid_argument', 'origin.source: must be an address of 1 to 64 characters', {
      path: 'origin.source',
    });
  }
}

/** What backends use to enqueue mail and control campaigns. */
export interface SluiceClient {
  /**
   * Validates and enqueues one message. Invalid input throws `invalid_message` naming the
   * field, an unknown or cancelled campaign `unknown_campaign` or `campaign_cancelled`:
   * nothing is written. Redis down or silent past `timeoutMs`: `redis_unavailable`.
   */
  send(message: MessageInput, options?: SendOptions): Promise<SendResult>;
  /**
   * Validates every message first (errors name `messages.<i>.<field>`): one bad message
   * refuses the call with nothing written. Then enqueues in chunks of `chunkSize`; a
   * `redis_unavailable` in a later chunk leaves the earlier ones written (retry the call
   * with the same idempotency keys: they come back `duplicate`).
   */
  sendBulk(messages: readonly MessageInput[], options?: SendOptions): Promise<SendResult[]>;
  readonly campaigns: Campaigns;
  readonly messages: Messages;
  /** A tenant's suppressed addresses: list, look up, add by hand, remove. */
  readonly suppressions: ClientSuppressions;
  /** Every final state and first deferral, through consumer groups: how a backend follows millions. */
  readonly outcomes: ClientOutcomes;
  /** The fleet under the client's prefix, as its heartbeats tell: processes, versions, schema, sandbox providers. */
  fleet(): Promise<FleetView>;
  /**
   * Closes queues, and the connection if the client opened it; past `timeoutMs` (Redis
   * silent) the connection it opened is dropped instead.
   */
  close(): Promise<void>;
}

/**
 * Wraps each method of `api`: refused once the client is closed, and run within the
 * client's deadline (`<name>.<method>` in its errors).
 */
function guarded<T extends object>(name: string, api: T, guard: Guard, check: () => void): T {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(api)) {
    const method = value as (...args: unknown[]) => Promise<unknown>;
    out[key] = async (...args: unknown[]) => {
      check();
      return guard(`${name}.${key}`, () => method(...args));
    };
  }
  return out as T;
}

function positiveInteger(value: number | undefined, fallback: number, path: string): number {
  if (value === undefined) return fallback;
  if (!Number.isSafeInteger(value) || value < 1)
    throw new SluiceError('invalid_argument', `${path}: must be a positive integer`, { path });
  return value;
}

/** The `replicas` option checked: a wait after each write, or none. */
function replicaWait(
  options: ClientOptions,
  timeoutMs: number,
  redis: Redis | Cluster,
): ((what: string) => Promise<void>) | undefined {
  if (options.replicas === undefined) return undefined;
  if (typeof options.replicas !== 'object' || options.replicas === null) {
    throw new SluiceError('invalid_argument', 'replicas: must be { count, timeoutMs? }', { path: 'replicas' });
  }
  const count = positiveInteger(options.replicas.count, 1, 'replicas.count');
  const waitMs = positiveInteger(
    options.replicas.timeoutMs,
    Math.max(1, Math.min(1_000, timeoutMs - 1)),
    'replicas.timeoutMs',
  );
  if (waitMs >= timeoutMs) {
    throw new SluiceError('invalid_argument', `replicas.timeoutMs: must be less than timeoutMs (${timeoutMs})`, {
      path: 'replicas.timeoutMs',
    });
  }
  return createReplicaWait(redis, { count, timeoutMs: waitMs });
}

/** Parses a call's input: every message before anything is read or written. */
function parse(input: unknown, path: readonly PropertyKey[]): Parsed {
  const message = parseMessage(input, path);
  // Read after a successful parse, which read the same field: no getter left to throw.
  const priorityGiven = (input as { priority?: unknown }).priority !== undefined;
  return { message, path, priorityGiven };
}

/** Creates a client. */
export function createClient(options: ClientOptions): SluiceClient {
  const chunkSize = positiveInteger(options.chunkSize, 1000, 'chunkSize');
  const timeoutMs = positiveInteger(options.timeoutMs, 5000, 'timeoutMs');
  const claimIdleMs = positiveInteger(options.outcomes?.claimIdleMs, 60_000, 'outcomes.claimIdleMs');
  const maxBacklog = positiveInteger(options.outcomes?.maxBacklog, 250_000, 'outcomes.maxBacklog');
  const ownsRedis = typeof options.redis === 'string';
  const redis =
    // connectRedis: a library prints nothing (ioredis would print each failed attempt); the
    // commands reject instead.
    // A Cluster answers the same commands and scripts; it is typed as a Redis from here on.
    typeof options.redis === 'string'
      ? connectRedis(options.redis, { maxRetriesPerRequest: 3 })
      : (options.redis as unknown as Redis);
  const keys: Keys = createKeys(options.prefix);
  const store: Store = createStore({ redis, keys });
  const queues = createQueues({ redis, keys });
  const guard = createGuard(timeoutMs);
  const fleetCheck = options.fleetCheck ?? 'error';
  if (!['error', 'warn', 'off'].includes(fleetCheck)) {
    throw new SluiceError('invalid_argument', `fleetCheck: must be 'error', 'warn' or 'off'`, { path: 'fleetCheck' });
  }
  const watch = createFleetWatch({
    redis,
    keys,
    mode: fleetCheck,
    onWarning: options.onWarning ?? ((w) => process.emitWarning(w.message, { type: 'SluiceWarning', code: w.code })),
  });
  const replicated = replicaWait(options, timeoutMs, redis);
  /** A call's chunk within its deadline, answered once its replicas have it (`replicas`). */
  const within =
    (what: string) =>
    <T>(run: (deadline: Deadline) => Promise<T>): Promise<T> =>
      guard(what, async (deadline) => {
        const result = await run(deadline);
        await replicated?.(what);
        return result;
      });
  const counted = (results: SendResult[]): SendResult[] => {
    watch.accepted(results.filter((r) => !r.duplicate).length);
    return results;
  };
  const intake = createIntake({ redis, keys, store, queues });
  const lifecycle = createCampaigns({ redis, keys, queues, store });
  const outcomes = clientOutcomes({ redis, keys, timeoutMs, claimIdleMs, maxBacklog, check: () => check() });
  const injection = createInjection({
    redis,
    keys,
    queues,
    store,
    within: (run) => guard('campaigns.inject', run),
    // The launch decision (campaigns.launch): open, wait until its time, or refused.
    gate: (id) => lifecycle.gate(id),
    // A consumer of the outcome stream behind past the bound: injection waits, no event is dropped.
    outcomesFull: async () => (await outcomes.api.backlog()) > maxBacklog,
    // Campaign jobs of many recipients once every live scheduler takes them.
    blocks: async () => (await watch.read()).blocks,
  });
  let closed = false;

  function check(): void {
    if (closed) throw new SluiceError('closed', 'the client is closed');
  }

  const messages: Messages = {
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
  };

  const campaigns = clientCampaigns(lifecycle);
  return {
    campaigns: {
      // Each method within the deadline, but the injection: it waits for room as long as it
      // takes, each chunk within the deadline.
      ...guarded('campaigns', campaigns, guard, check),
      create: async (input) => {
        check();
        await guard('campaigns.create', () => watch.ensure());
        return guard('campaigns.create', () => campaigns.create(input));
      },
      async inject(id, recipients, opts) {
        check();
        await guard('campaigns.inject', () => watch.ensure());
        return injection.inject(id, recipients, opts);
      },
      // A launch waits for a scheduler's decision within its own timeoutMs (10 s by default).
      launch: async (id, forecast, opts) => {
        check();
        return campaigns.launch(id, forecast, opts);
      },
    },
    suppressions: guarded('suppressions', createClientSuppressions(redis, keys, check), guard, check),
    messages: guarded('messages', messages, guard, check),
    outcomes: outcomes.api,
    async fleet() {
      check();
      return guard('fleet', () => watch.read());
    },
    async send(input, opts = {}) {
      check();
      checkOrigin(opts.origin);
      const parsed = { ...parse(input, []), origin: opts.origin };
      await guard('send', () => watch.ensure());
      const [result] = counted(await intake.enqueue([parsed], chunkSize, within('send')));
      return result!;
    },
    async sendBulk(inputs, opts = {}) {
      check();
      if (!Array.isArray(inputs)) {
        throw new SluiceError('invalid_argument', 'sendBulk takes an array of messages', { path: 'messages' });
      }
      checkOrigin(opts.origin);
      // Every message first: one bad one refuses the call before anything is read or written.
      const parsed = inputs.map((input, i) => ({ ...parse(input, ['messages', i]), origin: opts.origin }));
      await guard('sendBulk', () => watch.ensure());
      return counted(await intake.enqueue(parsed, chunkSize, within('sendBulk')));
    },
    async close() {
      if (closed) return;
      closed = true;
      // Closing waits for Redis too, but not past the deadline: then the connection is dropped.
      const done = (async () => {
        await outcomes.close();
        await queues.close();
        if (ownsRedis) await redis.quit();
      })();
      await guard('close', () => done).catch(() => {
        if (ownsRedis) redis.disconnect();
      });
    },
  };
}
