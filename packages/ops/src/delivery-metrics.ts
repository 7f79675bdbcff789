import { Counter, Histogram, type Registry } from 'prom-client';

/**
 * The ESP call's duration buckets, seconds: an API answers in tens of milliseconds, SMTP in
 * a few hundred, a slow one in seconds; the adapters time out at 30 s.
 */
const SEND_BUCKETS = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/**
 * Accepted by Sluice to accepted by the provider, seconds: critical mail in well under a
 * second, a campaign's in minutes to hours (its rate spreads it out), retries after backoff.
 */
const LATENCY_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600, 4 * 3600, 24 * 3600];

/** What {@link createDeliveryMetrics} returns: the worker's delivery engine takes it as `metrics`. */
export interface DeliveryCounters {
  attempt(labels: { provider: string; pool: string; receiver: string; outcome: string }, seconds: number): void;
  delivered(priority: string, seconds: number): void;
}

/**
 * A worker's own counters on `registry`, incremented in memory as it works (never a Redis
 * call), so a sum over workers is the fleet's:
 * - `sluice_sends_total{provider,pool,receiver,outcome}`: attempts a provider answered;
 * - `sluice_send_duration_seconds{provider,outcome}`: the ESP call of each, a histogram;
 * - `sluice_delivery_latency_seconds{priority}`: accepted by Sluice to accepted by the
 *   provider, a histogram.
 */
export function createDeliveryMetrics(registry: Registry): DeliveryCounters {
  const sends = new Counter({
    name: 'sluice_sends_total',
    help: 'Send attempts a provider answered, by outcome (accepted, rejected, deferred, throttled, ambiguous), counted by the worker that made them.',
    labelNames: ['provider', 'pool', 'receiver', 'outcome'] as const,
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'sluice_send_duration_seconds',
    help: 'Time the provider took to answer a send attempt (the ESP call, less Sluice’s own wait at its gate), seconds.',
    labelNames: ['provider', 'outcome'] as const,
    buckets: SEND_BUCKETS,
    registers: [registry],
  });
  const latency = new Histogram({
    name: 'sluice_delivery_latency_seconds',
    help: 'Time from accepted by Sluice to accepted by the provider, per class, seconds.',
    labelNames: ['priority'] as const,
    buckets: LATENCY_BUCKETS,
    registers: [registry],
  });
  return {
    attempt(labels, seconds) {
      sends.inc(labels);
      duration.observe({ provider: labels.provider, outcome: labels.outcome }, seconds);
    },
    delivered(priority, seconds) {
      latency.observe({ priority }, seconds);
    },
  };
}
