import { adjustmentField, decodeAdjustment, encodeAdjustment } from './codec.js';
import type { HashCopy } from './hash-copy.js';
import type { Adjustments } from './types.js';

/** Warming pools' progress (`warm:`). */
export type Warmups = Pick<Adjustments, 'warmup' | 'setWarmup'>;

/** The warm-up operations over a process's copy of the hash. */
export function createWarmups(copy: HashCopy): Warmups {
  return {
    warmup: (pool) => copy.get('warmup', pool),
    async setWarmup(pool, state, options) {
      if (options?.onlyIfAbsent) {
        // The first scheduler to see the pool starts its day; the others keep the one it wrote.
        const field = adjustmentField('warmup', pool);
        await copy.redis.hsetnx(copy.key, field, encodeAdjustment('warmup', state));
        const stored = await copy.redis.hget(copy.key, field);
        copy.keep('warmup', pool, stored === null ? state : decodeAdjustment('warmup', stored));
        return;
      }
      await copy.write('warmup', pool, state);
    },
  };
}
