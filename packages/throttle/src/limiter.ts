import type { Redis } from 'ioredis';
import { LAYER_KINDS, SluiceError, type LayerKind, type PriorityClass } from '@sluice/core';
import { capLimits, capReached, type CapCounter, type CapReached } from './caps.js';
import { defineScripts, type ScriptedRedis } from './internal/scripts.js';

/** One quota layer of a decision: its bucket key and limit. No `rate` means no limit. */
export interface LayerLimit {
  key: string;
  /** Messages per second. */
  rate?: number | undefined;
  /**
   * What a receiver may see on top of the rate in any window. Part of it (`jitterSlackMs`
   * of sends) is never spent on purpose: it absorbs the jitter between admission and
   * arrival. @defaultValue `max(1, round(rate / 10))`: 100 ms worth
   */
  burst?: number | undefined;
}

/** The five layers, in {@link LAYER_KINDS} order: provider, receiver, pool, campaign, tenant. */
export type Layers = readonly [LayerLimit, LayerLimit, LayerLimit, LayerLimit, LayerLimit];

/** One admission request. */
export interface AdmitRequest {
  layers: Layers;
  priority: PriorityClass;
  /** How far ahead a slot may be booked. 0 never books. */
  horizonMs: number;
  /**
   * Layers with a line: denied beyond the horizon there, a caller gets a numbered place
   * (a {@link Ticket}) and comes back at its turn, paced at the layer's rate in effect
   * while it waits, so a backlog comes back one by one and follows every rate change; a
   * caller without a ticket does not overtake the line. Only for callers that keep their
   * ticket: one that asks again without it is a newcomer each time. @defaultValue none
   */
  waitlist?: readonly LayerKind[];
  /** The place this caller was given last time (kept with the job), if any. */
  ticket?: Ticket | undefined;
  /**
   * A shorter reach for lending reserves to this request than the limiter's
   * {@link LimiterOptions.lendAheadMs} (never a longer one; no effect where reserves are never
   * lent). @defaultValue the limiter's
   */
  lendAheadMs?: number | undefined;
  /**
   * The group the caller holds as a whole when a layer other than the receiver denies it (a
   * campaign queue). Requests of one group decided in one script call: once one is denied so,
   * the later ones get the same answer without being decided, and are not counted in
   * {@link Limiter.calls}. @defaultValue none
   */
  group?: string | undefined;
  /**
   * The plan caps that count this message (docs/design/tenants-and-keys.md): its tenant's and
   * its API key's, each a counter (`keys.capCount`) and its limits. Counted, with the layers,
   * in the UTC windows of the slot it is admitted for; at a cap it is denied until the window
   * ends and nothing is charged. @defaultValue none
   */
  caps?: { tenant?: CapCounter | undefined; key?: CapCounter | undefined } | undefined;
}

/** A place in a layer's line (see `admit-n.lua`): kept by the caller and shown again. */
export interface Ticket {
  /** The layer's bucket key: a ticket for another bucket is no place at all. */
  key: string;
  slice: number;
  number: number;
}

/** The limiter's answer. */
export type AdmitResult =
  | { outcome: 'granted' }
  | {
      /** Every layer is charged for a slot `waitMs` from now: send then, without asking again. */
      outcome: 'booked';
      waitMs: number;
      layer: LayerKind;
    }
  | {
      /** Busy beyond the horizon; nothing was charged. Ask again in `waitMs`. */
      outcome: 'denied';
      waitMs: number;
      layer: LayerKind;
      /** The caller's place in a line now: show it with the next request. */
      ticket?: Ticket;
      /**
       * When to come back for a reserve this caller may borrow (see
       * {@link LimiterOptions.lendAheadMs}): lendable by then and busy until then, so a caller
       * back then leaves none of it idle and takes as many lent slots in a row as lending
       * allows (sooner, it gets one slot or none). May be sooner or later than `waitMs`; a
       * caller that waits longer (as a held campaign queue did: `waitMs` and half its horizon)
       * leaves the reserve idle meanwhile. Absent: no reserve will be lent to it as things stand.
       */
      lendWaitMs?: number;
      /** A plan cap, not a layer, denied it (`layer` is then `tenant`): until its window ends. */
      cap?: CapReached;
    };

/** One arrival request: the layers an outside party counts arrivals at. */
export interface ArriveRequest {
  /** Provider, receiver and IP pool, in that order (the first three of {@link Layers}). */
  layers: readonly [LayerLimit, LayerLimit, LayerLimit];
  /** How far ahead the send may be placed; past it nothing is counted. */
  aheadMs: number;
  /** The send's class: only critical mail goes on a local share while the limiter Redis is away (`withLocalShare`). */
  priority?: PriorityClass;
}

/** The arrival gate's answer. */
export type ArriveResult =
  /** Counted at every layer `waitMs` from now (0: now): send then. */
  | { outcome: 'placed'; waitMs: number }
  /** Every layer is full until `waitMs` from now, past the request's `aheadMs`; nothing was counted. */
  | { outcome: 'beyond'; waitMs: number; layer: LayerKind; key?: string };

/** Sends that arrive together, in one request (a batch): each with its three layers. */
export interface ArriveBatchRequest {
  /** Each send's provider, receiver and IP pool layers, as {@link ArriveRequest.layers}. */
  arrivals: readonly ArriveRequest['layers'][];
  /** How far ahead they may be placed; past it nothing is counted. */
  aheadMs: number;
}

/** The arrival gate's answer for sends arriving together: all placed at one time, or none. */
export type ArriveBatchResult =
  | ArriveResult
  /**
   * More of them count at one layer (`key`) than its rate + burst (`fits`): they never arrive
   * together there; nothing was counted. Split them.
   */
  | { outcome: 'too-many'; layer: LayerKind; key: string; fits: number };

/** The layer kind of each place of {@link ArriveRequest.layers}. */
const ARRIVAL_KINDS: readonly LayerKind[] = ['provider', 'receiver', 'pool'];

/** Options of {@link createLimiter}. */
export interface LimiterOptions {
  /** A connection of the caller's; the limiter does not close it. */
  redis: Redis;
  /**
   * Share of every layer reserved for a class and those above it. Lower classes take it only
   * as `lendAheadMs` allows; higher ones may borrow down. @defaultValue `{ critical: 0.2, high: 0 }`
   */
  reserves?: { critical: number; high: number };
  /**
   * A reserve is lent to lower classes for one slot at a time when its own classes could still
   * go within this many ms after it: they fill what a quiet critical class leaves, and a
   * critical message arriving later waits at most this long for its slice. A lower class
   * denied beyond its horizon is told when to come back for it (`lendWaitMs`). `null`: never
   * lent. @defaultValue `250`
   */
  lendAheadMs?: number | null;
  /**
   * How much of every layer's burst is held back as slack for transport jitter: this many
   * ms of sends at the layer's rate (at most all of the burst but one). Admission then never
   * bunches sends so tightly that ordinary lateness pushes a second over rate + burst.
   * @defaultValue `50`
   */
  jitterSlackMs?: number;
}

/** The layered limiter. */
export interface Limiter {
  /** One atomic decision over all five layers. Throws if Redis fails: no tokens then. */
  admit(request: AdmitRequest): Promise<AdmitResult>;
  /**
   * The arrival gate, asked just before a send: places it where every layer keeps at most
   * rate + burst sends in any second (`arrive-n.lua`), whatever slot admission booked.
   * Layers above {@link MAX_GATED} sends a second are not gated.
   */
  arrive(request: ArriveRequest): Promise<ArriveResult>;
  /**
   * The arrival gate for sends that arrive together (a batch's recipients in one request):
   * each counts at its layers, all placed at one time or none (`arrive-n.lua`).
   */
  arriveBatch(request: ArriveBatchRequest): Promise<ArriveBatchResult>;
  /** `admit` requests this instance had decided (for the waste benchmark): not those a group's earlier denial answered. */
  readonly calls: number;
}

/** The most sends a second (rate + burst) the arrival gate counts one by one; above it, slots alone pace. */
export const MAX_GATED = 5_000;

/** The most decisions in one admit-n call (~25 µs of Redis each). */
const MAX_BATCH = 64;
/** Batches a limiter has out at once; requests made meanwhile wait for the next. */
const MAX_IN_FLIGHT = 2;

/** A decision waiting for its batch: its layers, its numbers (JSON) and its caller. */
interface Queued {
  /** Its seven keys: the five layers' buckets, its tenant's and its key's cap counters. */
  keys: string[];
  request: string;
  /** Its reply: numbers, or `[-1, message]` when it failed alone. */
  settle(reply: (number | string)[]): void;
  /** Its batch's error. */
  fail(error: unknown): void;
}

/** A layer's burst: its own, else 100 ms of its rate (at least 1). */
const burstOf = (rate: number, burst: number | undefined): number => burst ?? Math.max(1, Math.round(rate / 10));

/**
 * Creates the shared limiter: every decision is one Lua call on Redis time, so all
 * processes share the same buckets.
 */
export function createLimiter(options: LimiterOptions): Limiter {
  const redis: ScriptedRedis = defineScripts(options.redis);
  const reserves = options.reserves ?? { critical: 0.2, high: 0 };
  const slackSeconds = (options.jitterSlackMs ?? 50) / 1000;
  const lendAheadUs = options.lendAheadMs === null ? -1 : Math.round((options.lendAheadMs ?? 250) * 1000);
  const fractions = [1 - reserves.critical - reserves.high, reserves.high, reserves.critical];
  if (!(fractions[0]! > 0) || fractions.some((f) => f < 0)) {
    throw new SluiceError('invalid_argument', 'reserves must be ≥ 0 and add up to less than 1', { path: 'reserves' });
  }
  // Slice order in every bucket: 1 shared, 2 high's reserve, 3 critical's reserve.
  const allowedMask = (priority: PriorityClass): number => {
    let mask = 1;
    if (priority === 'critical' || priority === 'high') mask |= fractions[1]! > 0 ? 2 : 0;
    if (priority === 'critical') mask |= fractions[2]! > 0 ? 4 : 0;
    return mask;
  };
  // A class's slices as the script's bitmask, worked out once.
  const allowed: Record<PriorityClass, number> = {
    critical: allowedMask('critical'),
    high: allowedMask('high'),
    normal: allowedMask('normal'),
    low: allowedMask('low'),
  };
  let calls = 0;

  // Decisions asked for together go to Redis together: one admit-n call for the requests of
  // one tick, and while MAX_IN_FLIGHT calls are out, the requests made meanwhile wait for
  // the next. One caller alone still goes at once; many cost one script call per batch.
  let queued: Queued[] = [];
  let inFlight = 0;
  let scheduled = false;
  const kick = (): void => {
    if (scheduled || queued.length === 0 || inFlight >= MAX_IN_FLIGHT) return;
    scheduled = true;
    process.nextTick(flush);
  };
  const flush = (): void => {
    scheduled = false;
    const batch = queued.length > MAX_BATCH ? queued.splice(0, MAX_BATCH) : queued;
    if (batch === queued) queued = [];
    inFlight++;
    const keys = batch.flatMap((q) => q.keys);
    redis
      .sluiceAdmit(keys.length, ...keys, `[${batch.map((q) => q.request).join(',')}]`)
      .then(
        (replies) => (replies as (number | string)[][]).forEach((reply, i) => batch[i]!.settle(reply)),
        (error: unknown) => batch.forEach((q) => q.fail(error)),
      )
      .finally(() => {
        inFlight--;
        kick();
      });
    kick();
  };
  /** One request's reply from the batch it goes in. */
  const decide = (keys: string[], request: string): Promise<number[]> =>
    new Promise((resolve, reject) => {
      queued.push({
        keys,
        request,
        settle: (reply) =>
          reply[0] === -1 ? reject(new Error(`admit-n: ${String(reply[1])}`)) : resolve(reply as number[]),
        fail: (error) => reject(error instanceof Error ? error : new Error(String(error))),
      });
      kick();
    });

  /**
   * Per layer: N (rate + burst; 0 = not counted) and the window, a second and the jitter
   * slack so sends bunched on their way still fit in any second at the receiver, never so
   * long that the rate itself would not fit.
   */
  function gateOf(layer: LayerLimit): [number, number] {
    if (layer.rate === undefined) return [0, 0];
    const n = Math.floor(layer.rate + burstOf(layer.rate, layer.burst));
    if (n === 0 || n > MAX_GATED) return [0, 0];
    return [n, Math.round(Math.min(1 + slackSeconds, n / layer.rate) * 1e6)];
  }

  /** Sends arriving together (`arrive-n.lua`): each layer once, with how many of them it counts. */
  async function arriveAll(arrivals: ArriveBatchRequest['arrivals'], aheadMs: number): Promise<ArriveBatchResult> {
    const byKey = new Map<string, { kind: LayerKind; gate: [number, number]; count: number }>();
    for (const layers of arrivals) {
      for (const [i, layer] of layers.entries()) {
        const seen = byKey.get(layer.key);
        if (seen) seen.count += 1;
        else byKey.set(layer.key, { kind: ARRIVAL_KINDS[i]!, gate: gateOf(layer), count: 1 });
      }
    }
    const gated = [...byKey].filter(([, l]) => l.gate[0] > 0);
    // No layer counted: nothing to ask Redis.
    if (gated.length === 0) return { outcome: 'placed', waitMs: 0 };
    const aheadUs = Math.max(0, Math.round(aheadMs * 1000));
    const args = gated.flatMap(([, l]) => [l.gate[0], l.gate[1], l.count]);
    const [code, waitMs, at] = (await redis.sluiceArrive(
      gated.length,
      ...gated.map(([key]) => key),
      aheadUs,
      ...args,
    )) as [number, number, number];
    if (code === 0) return { outcome: 'placed', waitMs };
    const [key, layer] = gated[at - 1] ?? gated[0]!;
    if (code === 2) return { outcome: 'too-many', layer: layer.kind, key, fits: layer.gate[0] };
    return { outcome: 'beyond', waitMs: Math.max(1, waitMs), layer: layer.kind, key };
  }

  return {
    get calls() {
      return calls;
    },
    async admit(request) {
      const { layers } = request;
      // One JSON array (a request of admit-n.lua's ARGV[1]): one argument to encode and send, not twenty.
      const req: (number | string | false)[] = [
        allowed[request.priority],
        Math.max(0, Math.round(request.horizonMs * 1000)),
        (request.waitlist ?? []).reduce((mask, kind) => mask | (1 << LAYER_KINDS.indexOf(kind)), 0),
        fractions[1]!,
        fractions[2]!,
        request.lendAheadMs === undefined || lendAheadUs < 0
          ? lendAheadUs
          : Math.min(lendAheadUs, Math.max(0, Math.round(request.lendAheadMs * 1000))),
      ];
      for (const [i, layer] of layers.entries()) {
        if (layer.rate === undefined) {
          req.push(0, 0);
          continue;
        }
        const burst = burstOf(layer.rate, layer.burst);
        // Checked here, so a bad request fails alone and never reaches a batch's script.
        if (!(layer.rate >= 0 && layer.rate < Infinity && burst >= 0 && burst < Infinity)) {
          throw new SluiceError(
            'invalid_argument',
            `layers[${i}] (${LAYER_KINDS[i]}): rate and burst must be finite numbers ≥ 0`,
            {
              path: `layers.${i}`,
            },
          );
        }
        req.push(layer.rate, Math.max(1, burst - Math.ceil(layer.rate * slackSeconds)));
      }
      const held = request.ticket;
      const heldLayer = held ? layers.findIndex((l) => l.key === held.key) + 1 : 0;
      const { tenant: tenantCap, key: keyCap } = request.caps ?? {};
      const limits = capLimits(tenantCap, keyCap);
      const group: (string | false)[] = request.group === undefined ? (limits ? [false] : []) : [request.group];
      if (heldLayer > 0) req.push(heldLayer, held!.slice, held!.number, ...group);
      else if (group.length > 0) req.push(0, 0, 0, ...group);
      if (limits) req.push(...limits);
      // Without a counter of its own, a cap slot is any key of the request's (never read).
      const tenantKey = layers[4].key;
      const keys = [
        ...layers.map((l) => l.key),
        tenantCap?.key ?? tenantKey,
        keyCap?.key ?? tenantCap?.key ?? tenantKey,
      ];
      const reply = await decide(keys, JSON.stringify(req));
      const code = reply[0];
      if (code !== 3) calls++;
      if (code === 0) return { outcome: 'granted' };
      const waitMs = reply[1]!;
      const kind = LAYER_KINDS[reply[2]! - 1] ?? 'provider';
      if (code === 1) return { outcome: 'booked', waitMs, layer: kind };
      const [, , , ticketLayer, ticketSlice, ticketNumber, lendWaitMs] = reply as [
        number,
        number,
        number,
        number,
        number,
        number,
        number,
      ];
      const denied: Extract<AdmitResult, { outcome: 'denied' }> = {
        outcome: 'denied',
        waitMs: Math.max(1, waitMs),
        layer: kind,
      };
      if (lendWaitMs > 0) denied.lendWaitMs = lendWaitMs;
      const cap = capReached(reply[7]);
      if (cap) denied.cap = cap;
      if (ticketLayer > 0)
        denied.ticket = { key: layers[ticketLayer - 1]!.key, slice: ticketSlice, number: ticketNumber };
      return denied;
    },
    async arrive(request) {
      const placed = await arriveAll([request.layers], request.aheadMs);
      if (placed.outcome !== 'too-many') return placed;
      // One send never exceeds a gated layer's N (at least 1): not reached.
      return { outcome: 'beyond', waitMs: 1_000, layer: placed.layer };
    },
    arriveBatch: (request) => arriveAll(request.arrivals, request.aheadMs),
  };
}
