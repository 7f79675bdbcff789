// What the convergence tests share: the governor's decisions as logged, and the arithmetic of
// their per-second series.
import type { Redis } from 'ioredis';
import type { GovernorDecision } from '@sluice/dispatch';

/** Every decision in the fleet's governor log, oldest first. */
export async function governorDecisions(redis: Redis, prefix: string): Promise<GovernorDecision[]> {
  return (await redis.xrange(`${prefix}:gov:log`, '-', '+')).map(([, f]) => JSON.parse(f[1]!) as GovernorDecision);
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
export const sum = (xs: number[]): number => xs.reduce((a, b) => a + b, 0);
export const mean = (xs: number[]): number => sum(xs) / xs.length;
