import type { Redis } from 'ioredis';
import { SluiceError, type Clock, type SluiceConfig } from '@sluice/core';
import type { LaunchChecks } from '../campaigns/launch-types.js';

/** Redis memory against maxmemory, or the configured budget when there is none (`INFO memory`). */
export async function storageOf(redis: Redis, budgetBytes: number): Promise<LaunchChecks['storage']> {
  const info = await redis.info('memory');
  const field = (name: string): number => Number(new RegExp(`^${name}:(\\d+)`, 'm').exec(info)?.[1] ?? 0);
  const used = field('used_memory');
  const max = field('maxmemory');
  const budget = max > 0 ? max : budgetBytes;
  return { usedBytes: used, budgetBytes: budget, share: used / budget, source: max > 0 ? 'maxmemory' : 'budget' };
}

/** How long one reading of Redis's memory stands for every request. */
const READ_EVERY_MS = 1_000;
/** When a request refused for storage is told to retry. */
const FULL_RETRY_MS = 5_000;

/**
 * Refuses new mail while Redis is past `launch.storage.rejectAbove` of its memory (the share
 * at which a launch is rejected): `storage_full`, retry later. Read at most once a second.
 */
export function createStorageGuard(options: { redis: Redis; config: SluiceConfig; clock?: Clock }) {
  const { redis, config } = options;
  const clock = options.clock ?? Date.now;
  let read: { at: number; storage: Promise<LaunchChecks['storage']> } | undefined;
  return {
    async check(): Promise<void> {
      if (read === undefined || clock() - read.at >= READ_EVERY_MS) {
        read = { at: clock(), storage: storageOf(redis, config.launch.storage.budgetBytes) };
        const reading = read;
        reading.storage.catch(() => {
          if (read === reading) read = undefined;
        });
      }
      // Unread (Redis away): the send that follows answers for Redis (`redis_unavailable`).
      const storage = await read.storage.catch(() => undefined);
      if (storage === undefined) return;
      const { share, usedBytes, budgetBytes, source } = storage;
      const limit = config.launch.storage.rejectAbove;
      if (share < limit) return;
      throw new SluiceError(
        'storage_full',
        `Redis holds ${usedBytes} of ${budgetBytes} bytes (${source}), past launch.storage.rejectAbove (${limit}): no new mail until there is room`,
        { action: 'retry', retryAfterMs: FULL_RETRY_MS },
      );
    },
  };
}
