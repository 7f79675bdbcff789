import type { Redis } from 'ioredis';
import type { Clock, DispatchJobData, IntakeJobData, Keys, SluiceConfig } from '@sluice/core';
import type { Plans, Queues, Store } from '@sluice/store';
import type { Adjustments, Limiter, Ticket } from '@sluice/throttle';
import type { Organisations } from '../routing/organisations.js';
import type { Warmup } from '../control/warmup.js';
import type { Batcher } from './batcher.js';

/** Why a message waits, noted on its record for `explain` (see `store.noteHeld`). */
export interface HeldNote {
  /** The layer or setting that holds it: a quota layer, `override`, `circuit`, `warmup`, `provider`. */
  by: string;
  /** Its key: the layer's name, `<scope>:<name>` of an override, the circuit, the pool. */
  key: string;
  /** Until when it waits (epoch ms). */
  untilMs: number;
  reason: string;
}

/**
 * How one admission ended (docs/design/flow.md, check order). The engine has written the record and
 * any dispatch job already; what is left for the caller is to act on the message's job
 * (`wait`) or its campaign queue (`hold`, `held`).
 */
export type AdmissionResult =
  /** Ended in a final state before any quota was looked at. */
  | { kind: 'final'; state: 'suppressed' | 'expired' }
  /** The record is past admission already (final, or a send under way): a duplicate job; nothing done. */
  | { kind: 'duplicate'; state: string }
  /**
   * Delay this message alone until `at`, noting `note` on its record in the same round trip.
   * `ticket`: its new place in a line, to keep on the job first (so a crash keeps the place).
   */
  | { kind: 'wait'; at: number; note: HeldNote; ticket?: Ticket }
  /** Hold the whole campaign queue for `ms` (every scheduler), noting `note` on this message. */
  | { kind: 'hold'; ms: number; note: HeldNote }
  /** The campaign queue is held already (found in this process): back to the queue, the limiter not asked. */
  | { kind: 'held' }
  /** Admitted: the dispatch job is added (sent `delay` ms from now); the record keeps its state until the worker's mark. */
  | { kind: 'dispatched'; data: DispatchJobData; delay: number };

/** What a step hands on: the run goes on (with what it found), or it ends with a result. */
export type Step<T extends object = object> = ({ kind: 'continue' } & T) | AdmissionResult;

/** Where the message being admitted came from. */
export interface AdmitContext {
  /**
   * The campaign queue it was taken from; absent for transactional intake. Set, a
   * campaign-wide layer or pause holds the whole queue, and once this process finds it
   * held it asks the limiter nothing more of it until the hold ends.
   */
  campaignQueue?: string | undefined;
}

/** Options of {@link createAdmission}: its collaborators, made and closed by the caller. */
export interface AdmissionOptions {
  config: SluiceConfig;
  store: Pick<Store, 'peek' | 'accept' | 'finalize' | 'noteHeld' | 'campaignLimit'>;
  limiter: Pick<Limiter, 'admit'>;
  adjustments: Pick<Adjustments, 'override' | 'circuit' | 'standing' | 'factor' | 'cap'>;
  warmup: Pick<Warmup, 'stateOf' | 'take' | 'giveBack' | 'dayEndsAt'>;
  organisations: Pick<Organisations, 'knownReceiverOf' | 'receiverOf'>;
  /** Where admitted messages go (`dispatch(class)`). */
  queues: Pick<Queues, 'dispatchOf'>;
  /** For the circuits' probe counters. */
  redis: Redis;
  keys: Keys;
  /** What "now" is for expiry, holds and decision times. @defaultValue `systemClock` */
  clock?: Clock;
  /** Spreads wake-ups (up to a second) and picks routes by weight. @defaultValue `Math.random` */
  random?: () => number;
  /** Where campaign mail that may wait is batched (`createBatcher`). @defaultValue none: one dispatch job a message */
  batcher?: Batcher | undefined;
  /** Tenants' plans: the caps a message counts against (`createPlans`). @defaultValue none: no caps */
  plans?: Pick<Plans, 'capsOf'> | undefined;
}

/** The collaborators every step reads, defaults applied. */
export type Deps = Required<Omit<AdmissionOptions, 'batcher' | 'plans'>> & Pick<AdmissionOptions, 'batcher' | 'plans'>;

/** The scheduler's checks in their order (docs/design/flow.md), as one call per message. */
export interface Admission {
  /** Runs every check on `message`, writes the record and any dispatch job, and says how it ended. */
  admit(message: IntakeJobData, ctx?: AdmitContext): Promise<AdmissionResult>;
  /** Waits for the campaign decisions in flight. */
  close(): Promise<void>;
}

/** A step's answer that lets the run go on. */
export const CONTINUE = { kind: 'continue' } as const;

/** Up to a second of spread, so what waited for one moment does not wake all at once. */
export const jitter = (deps: Pick<Deps, 'random'>): number => Math.floor(deps.random() * 1000);
