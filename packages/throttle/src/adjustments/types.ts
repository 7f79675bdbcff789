import type { Redis } from 'ioredis';
import type { Clock, Keys } from '@sluice/core';
import type { CampaignPause, CircuitState, Governed, OverrideState, WarmupState } from './codec.js';

/** How a provider stands for routing. */
export type ProviderStanding =
  | { state: 'ok' }
  /** Failing without answers (or account halted): skipped by routing until `untilMs`. */
  | { state: 'down'; untilMs: number; reason: string }
  /** Out of quota (SES daily quota): nothing is admitted to it until `untilMs`. */
  | { state: 'paused'; untilMs: number; reason: string };

/** What backpressure does on a throttle (config `backpressure`). */
export interface BackpressureOptions {
  factor: number;
  minFactor: number;
  cooldownMs: number;
  holdMs: number;
}

/** Options of `createAdjustments`. */
export interface AdjustmentsOptions {
  /** A connection of the caller's; not closed here. */
  redis: Redis;
  keys: Keys;
  backpressure: BackpressureOptions;
  /** How often the shared hash is read again. @defaultValue `250` */
  refreshMs?: number;
  /**
   * What "now" is for expiries, holds and decision times (tests step it). One exception:
   * `slowDown` stamps its cut and hold with Redis time (see there). @defaultValue `Date.now`
   */
  clock?: Clock;
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
  campaignPause(campaignId: string): CampaignPause | undefined;
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
  /**
   * Until when a recipient's mail waits (epoch ms), after it answered that it receives faster
   * than its mailbox takes (a reply of scope `recipient`); undefined when it is not held.
   */
  recipientHeldUntil(address: string): number | undefined;
  /**
   * Holds a recipient's mail until `untilMs` (a later hold already kept wins). Returns false
   * when `MAX_RECIPIENT_HOLDS` are in force and it was not kept.
   */
  holdRecipient(address: string, untilMs: number): Promise<boolean>;
  /** Sets (or, with `undefined`, lifts) the governor's factor of a layer key. */
  setGoverned(layerKey: string, factor: number | undefined, rule: string, from?: number): Promise<void>;
  /** When a layer key's rate was last cut deeply (epoch ms), if it was. */
  loweredAt(layerKey: string): number | undefined;
  /** A provider's rate cap from its own account limits (SES `MaxSendRate`), if any. */
  cap(provider: string): number | undefined;
  standing(provider: string): ProviderStanding;
  /**
   * Lowers a layer key's rate after a throttle. Returns the factor it runs at now. The cut,
   * its cooldown and the hold are stamped with Redis time, not the `clock`: every process
   * racing to cut the same burst compares against one clock.
   */
  slowDown(layerKey: string): Promise<{ cut: boolean; factor: number; untilMs: number }>;
  markDown(provider: string, forMs: number, reason: string): Promise<void>;
  /** Pauses a provider until `untilMs` (epoch ms); `undefined` lifts the pause. */
  pause(provider: string, untilMs: number | undefined, reason?: string): Promise<void>;
  setCap(provider: string, rate: number | undefined): Promise<void>;
  close(): void;
}
