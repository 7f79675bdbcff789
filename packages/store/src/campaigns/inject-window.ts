import type { Redis } from 'ioredis';
import { FINAL_STATES, type Keys } from '@sluice/core';
import type { Queues } from '../redis/queues.js';

/**
 * The window of a campaign's injection (DESIGN.md, Campaigns at scale): how many of its
 * recipients Redis may hold. `ready` bounds those admission has not taken yet (they wait in
 * the campaign queue's list), `max` those not final. The scheduler writes both to the
 * campaign hash (`win:ready`, `win:max`) from the campaign's admitted rate and the fleet's
 * `injection` config; until it has, the config's defaults apply.
 */
export interface InjectWindow {
  ready: number;
  max: number;
  /** Recipients waiting for admission (the queue's wait list). */
  waiting: number;
  /** Recipients accepted and not final. */
  pending: number;
  /** The admitted rate the scheduler measured (recipients per second), 0 before it has. */
  rate: number;
}

/** The window before any scheduler has written one: `injection.minWindow` and `injection.maxWindow`'s defaults. */
export const DEFAULT_WINDOW = { ready: 2_000, max: 50_000 } as const;

/** Reads a campaign's window in one round trip. */
export async function readWindow(redis: Redis, keys: Keys, queues: Queues, campaignId: string): Promise<InjectWindow> {
  const queue = queues.campaign(campaignId);
  const fields = ['win:ready', 'win:max', 'win:rate', 'n:accepted', ...FINAL_STATES.map((s) => `n:${s}`)];
  // A paused queue's jobs wait in its paused list: they count as waiting too.
  const [row, waiting, paused, prioritized] = await Promise.all([
    redis.hmget(keys.campaign(campaignId), ...fields),
    redis.llen(queue.keys.wait!),
    redis.llen(queue.keys.paused!),
    redis.zcard(queue.keys.prioritized!),
  ]);
  const n = (i: number): number => Number(row[i] ?? 0);
  let final = 0;
  for (let i = 4; i < fields.length; i++) final += n(i);
  return {
    ready: n(0) || DEFAULT_WINDOW.ready,
    max: n(1) || DEFAULT_WINDOW.max,
    rate: n(2),
    waiting: waiting + paused + prioritized,
    pending: Math.max(0, n(3) - final),
  };
}

/** Whether `count` more recipients fit the window. */
export function fits(w: InjectWindow, count: number): boolean {
  return w.waiting + count <= Math.max(w.ready, count) && w.pending + count <= Math.max(w.max, count);
}
