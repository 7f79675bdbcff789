import type { Redis } from 'ioredis';
import { systemClock, type Clock, type Keys, type LayerKind } from '@sluice/core';
import { defineScripts, type ScriptedRedis } from './internal/scripts.js';

/** How a provider stands for routing. */
export type ProviderStanding =
  | { state: 'ok' }
  /** Failing without answers (or account halted): skipped by routing until `untilMs`. */
  | { state: 'down'; untilMs: number; reason: string }
  /** Out of quota (SES daily quota): nothing is admitted to it until `untilMs`. */
  | { state: 'paused'; untilMs: number; reason: string };

/** A circuit that is not closed: open until `untilMs`, then letting `probes` through per `openForMs` (half-open). */
export interface CircuitState {
  untilMs: number;
  openForMs: number;
  probes: number;
  rule: string;
}

/** What backpressure does on a throttle (config `backpressure`). */
export interface BackpressureOptions {
  factor: number;
  minFactor: number;
  cooldownMs: number;
  holdMs: number;
}

/** Options of {@link createAdjustments}. */
export interface AdjustmentsOptions {
  /** A connection of the caller's; not closed here. */
  redis: Redis;
  keys: Keys;
  backpressure: BackpressureOptions;
  /** How often the shared hash is read again. @defaultValue `250` */
  refreshMs?: number;
  /** What "now" is for expiries, holds and decision times (tests step it). @defaultValue `Date.now` */
  clock?: Clock;
}

/** A warming pool's progress (see {@link Adjustments.warmup}). */
export interface WarmupState {
  /** Index into the pool's `warmup.schedule`. */
  step: number;
  /** When the current day began (epoch ms); it ends `dayMs` later. */
  dayStart: number;
  state: 'warming' | 'active';
}

/**
 * What an operator override does to its key: `pause` admits nothing new through it,
 * `suspend` also stops admitted mail at the workers, `rate` replaces its configured rate.
 */
export type OverrideKind = 'pause' | 'suspend' | 'rate';

/**
 * An operator override as the adjustments hash keeps it (field `ovr:<layerKey>`, JSON).
 * Written by `@sluice/ops` (whose `Override` is this shape); read here because every
 * scheduler and worker already reads the hash.
 */
export interface OverrideState {
  scope: LayerKind;
  name: string;
  kind: OverrideKind;
  /** Messages per second, for `kind: 'rate'`. */
  rate?: number;
  /** When it ends by itself (epoch ms): readers treat it as absent from then on. */
  untilMs: number;
  actor: string;
  reason: string;
  setAt: number;
}

/** The adjustments-hash field of a layer key's override. */
export const overrideField = (layerKey: string): string => `ovr:${layerKey}`;

/** The audit stream is capped near this many entries. */
const AUDIT_MAXLEN = 100_000;

function parseOverride(raw: string): OverrideState | undefined {
  try {
    const o = JSON.parse(raw) as OverrideState;
    return typeof o.untilMs === 'number' && typeof o.kind === 'string' ? o : undefined;
  } catch {
    return undefined; // a field nobody can read holds nothing
  }
}

/**
 * Removes a layer key's override and writes its audit entry in one script, so it happens
 * once however many callers race: `expired` removes it only once its `untilMs` has passed
 * (the sweep), `live` only while it is in force (an operator's clear). Returns what was removed.
 */
export async function removeOverride(
  redis: Redis,
  keys: Keys,
  layerKey: string,
  entry: { mode: 'expired' | 'live'; action: 'clear' | 'expire'; actor: string; reason: string; now?: number },
): Promise<OverrideState | undefined> {
  const [code, value] = (await defineScripts(redis).sluiceOverrideRemove(
    keys.adjustments(),
    keys.audit(),
    overrideField(layerKey),
    entry.mode,
    entry.action,
    entry.actor,
    entry.now ?? Date.now(),
    entry.reason,
    AUDIT_MAXLEN,
  )) as [number, string];
  return code === 1 ? parseOverride(value) : undefined;
}

/**
 * Deletes every override whose time is up, each with one `expire` audit entry (actor
 * `sluice`). Readers already ignore them by then: this keeps the hash and the trail tidy.
 * Returns the overrides this call expired (none that another sweeper got first).
 */
export async function sweepOverrides(redis: Redis, keys: Keys, now = Date.now()): Promise<OverrideState[]> {
  const fields = await redis.hgetall(keys.adjustments());
  const out: OverrideState[] = [];
  for (const [field, raw] of Object.entries(fields)) {
    if (!field.startsWith('ovr:')) continue;
    const o = parseOverride(raw);
    if (o !== undefined && o.untilMs > now) continue;
    const removed = await removeOverride(redis, keys, field.slice(4), { mode: 'expired', action: 'expire', actor: 'sluice', reason: 'expired', now });
    if (removed) out.push(removed);
  }
  return out;
}

/** The governor's setting of a layer key (see {@link Adjustments.governed}). */
export interface Governed {
  factor: number;
  /** The last decision on the key (epoch ms), its rule (`recovery` for a step back up) and the factor before it. */
  decidedAt: number;
  rule: string;
  from: number;
  /**
   * The last cut (epoch ms), the factor it set, its rule and the factor it cut from (where
   * the trouble was): recovery climbs from there.
   */
  cutAt: number;
  cutFactor: number;
  cutRule: string;
  cutFrom: number;
}

/**
 * The effective-rate adjustments every process shares through one Redis hash
 * (`keys.adjustments()`): rates lowered after throttles, the SES quota cap, providers down
 * or paused. Writes go to Redis at once; reads come from a copy refreshed every
 * `refreshMs`, so admission pays no extra round trip for them.
 */
export interface Adjustments {
  /** Reads the hash once, then keeps reading it every `refreshMs` until `close()`. */
  start(): Promise<void>;
  /** Reads the hash now. */
  refresh(): Promise<void>;
  /** The share (0..1] of its configured rate a layer key runs at now: the governor's, else backpressure's. */
  factor(layerKey: string): number;
  /**
   * The governor's setting of a layer key, if any: its factor, the last decision (a cut or
   * a recovery step) and the last cut (when, and the factor it set), which recovery steps
   * keep.
   */
  governed(layerKey: string): Governed | undefined;
  /** Every layer key the governor has lowered. */
  governedKeys(): string[];
  /** The operator override of a layer key while it is in force; absent once its `untilMs` has passed. */
  override(layerKey: string): OverrideState | undefined;
  /** Every override in force, with its layer key. */
  overrides(): (OverrideState & { layerKey: string })[];
  /** A circuit's state (`<receiver>|<pool>|<stream>`), absent when closed. */
  circuit(name: string): CircuitState | undefined;
  /** Every circuit that is not closed. */
  circuits(): string[];
  /** Sets a circuit's state; `undefined` closes it and records when (see `circuitClosedAt`). */
  setCircuit(name: string, state: CircuitState | undefined): Promise<void>;
  /** When a circuit last closed (epoch ms), if it ever did. */
  circuitClosedAt(name: string): number | undefined;
  /** A campaign the governor paused: until when, by which rule. */
  campaignPause(campaignId: string): { untilMs: number; rule: string } | undefined;
  /** Every campaign the governor has paused. */
  campaignPauses(): string[];
  /** Records (or, with `undefined`, lifts) the governor's pause of a campaign. */
  setCampaignPause(campaignId: string, untilMs: number | undefined, rule?: string): Promise<void>;
  /**
   * A warming pool's progress: the step of its schedule, when its day began, and whether it
   * is still warming (`active` once the schedule is done). Absent before its first day.
   */
  warmup(pool: string): WarmupState | undefined;
  /** Records a warming pool's progress (the governor's, or the first scheduler to see the pool). */
  setWarmup(pool: string, state: WarmupState, options?: { onlyIfAbsent?: boolean }): Promise<void>;
  /** Sets (or, with `undefined`, lifts) the governor's factor of a layer key. */
  setGoverned(layerKey: string, factor: number | undefined, rule: string, from?: number): Promise<void>;
  /** When a layer key's rate was last cut deeply (epoch ms), if it was. */
  loweredAt(layerKey: string): number | undefined;
  /** A provider's rate cap from its own account limits (SES `MaxSendRate`), if any. */
  cap(provider: string): number | undefined;
  standing(provider: string): ProviderStanding;
  /** Lowers a layer key's rate after a throttle. Returns the factor it runs at now. */
  slowDown(layerKey: string): Promise<{ cut: boolean; factor: number; untilMs: number }>;
  markDown(provider: string, forMs: number, reason: string): Promise<void>;
  /** Pauses a provider until `untilMs` (epoch ms); `undefined` lifts the pause. */
  pause(provider: string, untilMs: number | undefined, reason?: string): Promise<void>;
  setCap(provider: string, rate: number | undefined): Promise<void>;
  close(): void;
}

interface Slow {
  factor: number;
  untilMs: number;
}

/** The factor a lowered key runs at `now`: held until `untilMs`, then doubled every `holdMs`. */
export function slowFactor(slow: Slow, now: number, holdMs: number): number {
  if (now <= slow.untilMs) return slow.factor;
  return Math.min(1, slow.factor * 2 ** (Math.floor((now - slow.untilMs) / holdMs) + 1));
}

/** Creates the shared adjustments of one deployment. */
export function createAdjustments(options: AdjustmentsOptions): Adjustments {
  const redis: ScriptedRedis = defineScripts(options.redis);
  const key = options.keys.adjustments();
  const { backpressure } = options;
  const clock = options.clock ?? systemClock;
  let fields: Record<string, string> = {};
  // Parsed once a refresh, not once a message: admission asks for five keys per decision.
  let overrides = new Map<string, OverrideState>();
  let timer: NodeJS.Timeout | undefined;
  let closed = false;

  const pair = (raw: string | undefined): [number, string] | undefined => {
    if (raw === undefined) return undefined;
    const comma = raw.indexOf(',');
    return [Number(comma < 0 ? raw : raw.slice(0, comma)), comma < 0 ? '' : raw.slice(comma + 1)];
  };

  const self: Adjustments = {
    async start() {
      await self.refresh();
      const loop = (): void => {
        timer = setTimeout(() => {
          self
            .refresh()
            .catch(() => undefined) // keeps the last copy; Redis errors surface on the hot path
            .finally(() => {
              if (!closed) loop();
            });
        }, options.refreshMs ?? 250);
        timer.unref();
      };
      loop();
    },
    async refresh() {
      fields = await redis.hgetall(key);
      const next = new Map<string, OverrideState>();
      for (const [field, raw] of Object.entries(fields)) {
        if (!field.startsWith('ovr:')) continue;
        const o = parseOverride(raw);
        if (o !== undefined) next.set(field.slice(4), o);
      }
      overrides = next;
    },
    override(layerKey) {
      // Expires by itself: no process has to be running for it to end on time.
      const o = overrides.get(layerKey);
      return o !== undefined && o.untilMs > clock() ? o : undefined;
    },
    overrides() {
      const now = clock();
      return [...overrides].filter(([, o]) => o.untilMs > now).map(([layerKey, o]) => ({ ...o, layerKey }));
    },
    factor(layerKey) {
      // Once the governor has set a key it owns it: backpressure is the brake for the
      // moment before the governor's first decision, not a second controller fighting it.
      const governed = self.governed(layerKey);
      if (governed !== undefined) return governed.factor;
      const raw = fields[`slow:${layerKey}`];
      if (raw === undefined) return 1;
      const [factor, untilMs] = raw.split(',').map(Number) as [number, number];
      return slowFactor({ factor, untilMs }, clock(), backpressure.holdMs);
    },
    governed(layerKey) {
      const raw = fields[`gov:${layerKey}`];
      if (raw === undefined) return undefined;
      const [factor, decidedAt, rule, from, cutAt, cutFactor, cutRule, cutFrom] = raw.split(',');
      return {
        factor: Number(factor),
        decidedAt: Number(decidedAt),
        rule: rule ?? '',
        from: from === undefined ? 1 : Number(from),
        cutAt: cutAt === undefined ? Number(decidedAt) : Number(cutAt),
        cutFactor: cutFactor === undefined ? Number(factor) : Number(cutFactor),
        cutRule: cutRule ?? rule ?? '',
        cutFrom: cutFrom === undefined ? (from === undefined ? 1 : Number(from)) : Number(cutFrom),
      };
    },
    governedKeys() {
      return Object.keys(fields)
        .filter((f) => f.startsWith('gov:'))
        .map((f) => f.slice(4));
    },
    circuit(name) {
      const raw = fields[`circuit:${name}`];
      if (raw === undefined) return undefined;
      const [untilMs, openForMs, probes, rule] = raw.split(',');
      return { untilMs: Number(untilMs), openForMs: Number(openForMs), probes: Number(probes), rule: rule ?? '' };
    },
    circuits() {
      return Object.keys(fields)
        .filter((f) => f.startsWith('circuit:'))
        .map((f) => f.slice('circuit:'.length));
    },
    async setCircuit(name, state) {
      const field = `circuit:${name}`;
      if (state === undefined) {
        const closedAt = String(clock());
        delete fields[field];
        fields[`circuitclosed:${name}`] = closedAt;
        await redis.multi().hdel(key, field).hset(key, `circuitclosed:${name}`, closedAt).exec();
        return;
      }
      const value = `${state.untilMs},${state.openForMs},${state.probes},${state.rule}`;
      fields[field] = value;
      await redis.hset(key, field, value);
    },
    circuitClosedAt(name) {
      const raw = fields[`circuitclosed:${name}`];
      return raw === undefined ? undefined : Number(raw);
    },
    campaignPause(campaignId) {
      const pause = pair(fields[`govpause:${campaignId}`]);
      return pause === undefined ? undefined : { untilMs: pause[0], rule: pause[1] };
    },
    campaignPauses() {
      return Object.keys(fields)
        .filter((f) => f.startsWith('govpause:'))
        .map((f) => f.slice('govpause:'.length));
    },
    async setCampaignPause(campaignId, untilMs, rule = '') {
      const field = `govpause:${campaignId}`;
      if (untilMs === undefined) {
        delete fields[field];
        await redis.hdel(key, field);
        return;
      }
      fields[field] = `${untilMs},${rule}`;
      await redis.hset(key, field, fields[field]);
    },
    warmup(pool) {
      const raw = fields[`warm:${pool}`];
      if (raw === undefined) return undefined;
      const [step, dayStart, state] = raw.split(',');
      return { step: Number(step), dayStart: Number(dayStart), state: state === 'active' ? 'active' : 'warming' };
    },
    async setWarmup(pool, state, options) {
      const field = `warm:${pool}`;
      const value = `${state.step},${state.dayStart},${state.state}`;
      if (options?.onlyIfAbsent) {
        await redis.hsetnx(key, field, value);
        fields[field] = (await redis.hget(key, field)) ?? value;
        return;
      }
      fields[field] = value;
      await redis.hset(key, field, value);
    },
    async setGoverned(layerKey, factor, rule, from = 1) {
      const field = `gov:${layerKey}`;
      if (factor === undefined || factor >= 1) {
        delete fields[field];
        await redis.hdel(key, field);
        return;
      }
      const now = clock();
      const last = rule === 'recovery' ? self.governed(layerKey) : undefined;
      const cut = last
        ? `${last.cutAt},${last.cutFactor.toFixed(4)},${last.cutRule},${last.cutFrom.toFixed(4)}`
        : `${now},${factor.toFixed(4)},${rule},${from.toFixed(4)}`;
      const value = `${factor.toFixed(4)},${now},${rule},${from.toFixed(4)},${cut}`;
      fields[field] = value;
      await redis.hset(key, field, value);
    },
    loweredAt(layerKey) {
      // Only a deep cut (to 60% or less) sends admitted mail back to the limiter: for a
      // shallow one, the churn of asking again costs more than the few sends it spares.
      const governed = self.governed(layerKey);
      if (governed !== undefined) return governed.rule !== 'recovery' && governed.factor <= governed.from * 0.6 ? governed.decidedAt : undefined;
      const raw = fields[`slow:${layerKey}`];
      return raw === undefined ? undefined : Number(raw.split(',')[2]);
    },
    cap(provider) {
      const raw = fields[`cap:${provider}`];
      return raw === undefined ? undefined : Number(raw);
    },
    standing(provider) {
      const now = clock();
      const paused = pair(fields[`pause:${provider}`]);
      if (paused && paused[0] > now) return { state: 'paused', untilMs: paused[0], reason: paused[1] };
      const down = pair(fields[`down:${provider}`]);
      if (down && down[0] > now) return { state: 'down', untilMs: down[0], reason: down[1] };
      return { state: 'ok' };
    },
    async slowDown(layerKey) {
      const [cut, micro, untilMs, lastCut] = (await redis.sluiceSlowDown(
        key,
        `slow:${layerKey}`,
        backpressure.factor,
        backpressure.minFactor,
        backpressure.cooldownMs,
        backpressure.holdMs,
      )) as [number, number, number, number];
      fields[`slow:${layerKey}`] = `${micro / 1e6},${untilMs},${lastCut}`;
      return { cut: cut === 1, factor: micro / 1e6, untilMs };
    },
    async markDown(provider, forMs, reason) {
      const value = `${clock() + forMs},${reason.slice(0, 200)}`;
      fields[`down:${provider}`] = value;
      await redis.hset(key, `down:${provider}`, value);
    },
    async pause(provider, untilMs, reason = '') {
      if (untilMs === undefined) {
        delete fields[`pause:${provider}`];
        await redis.hdel(key, `pause:${provider}`);
        return;
      }
      const value = `${untilMs},${reason.slice(0, 200)}`;
      fields[`pause:${provider}`] = value;
      await redis.hset(key, `pause:${provider}`, value);
    },
    async setCap(provider, rate) {
      if (rate === undefined) {
        delete fields[`cap:${provider}`];
        await redis.hdel(key, `cap:${provider}`);
        return;
      }
      fields[`cap:${provider}`] = String(rate);
      await redis.hset(key, `cap:${provider}`, String(rate));
    },
    close() {
      closed = true;
      if (timer) clearTimeout(timer);
    },
  };
  return self;
}
