import { poolOf, type PoolState, type SluiceConfig } from '@sluice/core';
import type { Adjustments } from '@sluice/throttle';

/** What else decides a route besides the providers' standing. */
export interface RouteOptions {
  random?: () => number;
  /** A pool's state now (a warming pool turns active once warm). @defaultValue its config state */
  poolState?: (pool: string) => PoolState;
  /** Providers not to choose this time (a warming pool whose cap for the receiver is spent). */
  exclude?: (provider: string) => boolean;
  /** What "now" is (epoch ms), for the wait of a paused route. @defaultValue `Date.now()` */
  now?: number;
}

/** Where a message goes: a provider now, or nowhere until `waitMs` (every provider of its route is paused). */
export type RouteChoice = { provider: string; failover: boolean } | { waitMs: number; reason: string };

function pick<T extends { weight: number }>(options: readonly T[], random: () => number): T | undefined {
  const total = options.reduce((n, o) => n + o.weight, 0);
  if (total <= 0) return options[0];
  let r = random() * total;
  for (const o of options) {
    r -= o.weight;
    if (r < 0) return o;
  }
  return options[options.length - 1];
}

/**
 * Chooses the provider of a message of `stream`: by weight among its route
 * (`routes.<stream>`, else `defaultProvider`). A provider that is down, paused (out of
 * quota) or throttled hard (rate lowered to `failover.throttledBelow` or less) is
 * replaced by another of the route that is not, by weight (weight-0 entries are standbys,
 * used only then); that is a failover. When every provider of the route is unavailable
 * the first choice is kept (its lowered rate and backoff pace it), unless it is paused:
 * then the message waits for the earliest pause to end.
 */
export function route(
  config: SluiceConfig,
  adjustments: Pick<Adjustments, 'standing' | 'factor'>,
  bucketKey: (provider: string) => string,
  stream: string,
  options: RouteOptions = {},
): RouteChoice {
  const random = options.random ?? Math.random;
  const poolState = options.poolState ?? ((pool: string) => config.pools[pool]?.state ?? 'active');
  // Pools decide first: draining and retired ones take nothing new, a standby one only
  // what fails over (as a weight-0 entry).
  const candidates = (config.routes[stream] ?? [{ provider: config.defaultProvider, weight: 1 }]).flatMap((c) => {
    const state = poolState(poolOf(config, c.provider));
    if (state === 'draining' || state === 'retired' || options.exclude?.(c.provider)) return [];
    return [state === 'standby' ? { ...c, weight: 0 } : c];
  });
  if (candidates.length === 0)
    return {
      waitMs: 60_000,
      reason: `no provider of stream ${stream} can take it now (pools draining, retired or at their warm-up caps)`,
    };
  const weighted = candidates.filter((c) => c.weight > 0);
  const first = pick(weighted.length > 0 ? weighted : candidates, random)!;
  const available = (provider: string): boolean =>
    adjustments.standing(provider).state === 'ok' &&
    adjustments.factor(bucketKey(provider)) > config.failover.throttledBelow;
  if (available(first.provider)) return { provider: first.provider, failover: false };

  const others = candidates.filter((c) => c.provider !== first.provider && available(c.provider));
  const weightedOthers = others.filter((c) => c.weight > 0);
  const next = pick(weightedOthers.length > 0 ? weightedOthers : others.map((c) => ({ ...c, weight: 1 })), random);
  if (next) return { provider: next.provider, failover: true };

  // Nothing better: a provider that is down or throttled still beats none (its lowered
  // rate and backoff pace it), but nothing is admitted to a paused one.
  const unpaused = candidates.filter((c) => adjustments.standing(c.provider).state !== 'paused');
  if (unpaused.some((c) => c.provider === first.provider)) return { provider: first.provider, failover: false };
  const fallback = pick(
    unpaused.map((c) => ({ ...c, weight: Math.max(c.weight, 1e-9) })),
    random,
  );
  if (fallback) return { provider: fallback.provider, failover: true };
  const pauses = candidates.map((c) => adjustments.standing(c.provider)).filter((s) => s.state === 'paused');
  const until = Math.min(...pauses.map((s) => s.untilMs));
  return {
    waitMs: Math.max(1, until - (options.now ?? Date.now())),
    reason: `every provider of stream ${stream} is paused: ${pauses[0]?.reason ?? ''}`,
  };
}
