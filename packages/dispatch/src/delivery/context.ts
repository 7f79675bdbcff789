import type { Logger } from 'pino';
import type { Clock, Keys, PriorityClass, SluiceConfig } from '@sluice/core';
import type { Outcome } from '@sluice/providers';
import type { CampaignWork, Queues, Store } from '@sluice/store';
import type { Adjustments, Limiter, Signals } from '@sluice/throttle';
import type { Latency } from './latency.js';
import type { DeliveryMetrics } from './metrics.js';

/** What every stage of a delivery works with: the engine's collaborators, none of them its own. */
export interface DeliveryContext {
  config: SluiceConfig;
  keys: Keys;
  store: Store;
  limiter: Limiter;
  adjustments: Adjustments;
  signals: Signals;
  latency: Latency;
  metrics: DeliveryMetrics;
  queues: Queues;
  /** Marks a campaign whose queue a message goes back to, so the schedulers' polls keep it. */
  work: Pick<CampaignWork, 'mark'>;
  logger: Logger;
  clock: Clock;
}

/** An outcome that may lead to another attempt: temporary, or unknown (`ambiguous`). */
export type RetryOutcome = Exclude<Outcome, { kind: 'accepted' | 'rejected' }>;

/** The family a temporary outcome is retried and counted under (`ambiguous` has its own). */
export function familyOf(outcome: RetryOutcome): string {
  return outcome.kind === 'ambiguous' ? 'ambiguous' : outcome.family;
}

/** Local permits over the connection slots held (the worker's `SlotGate`). */
export interface DeliveryGate {
  /** Waits for a permit; returns its release function. */
  acquire(priority: PriorityClass): Promise<() => void>;
}

/** How a delivery ended for its job: done (whatever its message's state), or delayed in its dispatch queue. */
export type DeliveryResult = 'done' | 'delayed';
