import { RETRY_FAMILIES, type RetryCounts, type RetryFamily, type SluiceConfig } from '@sluice/core';

/**
 * Exponential backoff with jitter: `base × 2^(failures-1)`, capped at `max`, then a
 * random point in its upper half so retries of one burst do not arrive together.
 */
export function backoffMs(failures: number, baseMs: number, maxMs: number, random: () => number = Math.random): number {
  const ceiling = Math.min(maxMs, baseMs * 2 ** Math.max(0, failures - 1));
  return Math.round(ceiling / 2 + random() * (ceiling / 2));
}

/** What to do after a temporary failure of `family`. */
export type RetryPlan =
  | { retry: true; delayMs: number; counts: RetryCounts }
  /** Out of attempts: this family's cap or `delivery.maxAttempts`. */
  | { retry: false; why: string };

/**
 * Plans the next attempt after a temporary failure: the family's schedule (backoff with
 * jitter, capped), the reply's own hint when it asks for longer, and the family's and
 * the message's attempt caps. Throttles do not count towards `delivery.maxAttempts`:
 * they say nothing about the message, only about the pace.
 */
export function planRetry(
  config: SluiceConfig,
  family: string,
  counts: RetryCounts | undefined,
  hintMs?: number,
  random: () => number = Math.random,
): RetryPlan {
  const key: RetryFamily = (RETRY_FAMILIES as readonly string[]).includes(family) ? (family as RetryFamily) : 'unknown';
  const schedule = config.delivery.retry[key];
  const previous = counts ?? { failures: 0, byFamily: {} };
  const n = (previous.byFamily[key] ?? 0) + 1;
  const failures = previous.failures + (key === 'throttled' ? 0 : 1);
  // The n-th failure of a family whose schedule allows n attempts is the last.
  if (n >= schedule.maxAttempts)
    return { retry: false, why: `attempts_exhausted: ${n} × ${key} (delivery.retry.${key}.maxAttempts)` };
  if (failures >= config.delivery.maxAttempts)
    return { retry: false, why: `attempts_exhausted: ${failures} failures (delivery.maxAttempts)` };
  const delayMs = Math.max(hintMs ?? 0, backoffMs(n, schedule.baseMs, schedule.maxMs, random));
  return { retry: true, delayMs, counts: { failures, byFamily: { ...previous.byFamily, [key]: n } } };
}
