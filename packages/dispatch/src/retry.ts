/**
 * Exponential backoff with jitter: `base × 2^(failures-1)`, capped at `max`, then a
 * random point in its upper half so retries of one burst do not arrive together.
 */
export function backoffMs(failures: number, baseMs: number, maxMs: number, random: () => number = Math.random): number {
  const ceiling = Math.min(maxMs, baseMs * 2 ** Math.max(0, failures - 1));
  return Math.round(ceiling / 2 + random() * (ceiling / 2));
}
