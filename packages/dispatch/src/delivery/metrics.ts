import { BUILT_IN_ORGANISATIONS, type DispatchJobData, type PriorityClass, type SluiceConfig } from '@sluice/core';
import type { Outcome } from '@sluice/providers';

/** The labels of one attempt: bounded sets only (never a recipient, a message or a domain of its own). */
export interface AttemptLabels {
  provider: string;
  /** The provider's IP pool. */
  pool: string;
  /** A configured receiver or a known organisation; `other` for a domain's own bucket. */
  receiver: string;
  /** How the provider answered (`Outcome['kind']`). */
  outcome: Outcome['kind'];
}

/**
 * Where a worker counts its own work, in memory (prom-client's counters and histograms fit):
 * each call is an increment, never a Redis round trip, so a sum over workers is the fleet's.
 */
export interface DeliveryMetrics {
  /** One attempt the provider answered (its attempt is counted), and how long the ESP took, seconds. */
  attempt(labels: AttemptLabels, seconds: number): void;
  /** A message accepted by its provider: seconds since Sluice accepted it. */
  delivered(priority: PriorityClass, seconds: number): void;
}

/** Counts nothing: the engine's default, for a worker with no `/metrics`. */
export const NO_DELIVERY_METRICS: DeliveryMetrics = { attempt() {}, delivered() {} };

/**
 * The `receiver` label of a message: its bucket's name when that is a configured receiver or
 * a known organisation, else `other`, so a campaign to a million domains adds no series.
 */
export function receiverLabeller(config: SluiceConfig): (m: Pick<DispatchJobData, 'receiver'>) => string {
  const named = new Set([
    ...config.receivers.map((p) => p.name),
    ...config.organisations.patterns.map((o) => o.name),
    ...(config.organisations.builtIn ? BUILT_IN_ORGANISATIONS.map((o) => o.name) : []),
  ]);
  return (m) => (named.has(m.receiver) ? m.receiver : 'other');
}
