import { describe, expect, it } from 'vitest';
import { createLocalBuckets } from '../src/local-share.js';

// The local buckets a process decides critical mail on while the limiter Redis is away: each
// layer at its fraction of rate and burst, the slowest layer deciding, nothing charged past
// the horizon.

const provider = { key: 'p', rate: 100, burst: 20 };
const receiver = { key: 'r', rate: 20, burst: 10 };
const unlimited = { key: 'u' };

describe('local buckets', () => {
  it('takes at the fraction of the layer: its burst at once, then one per interval', () => {
    const buckets = createLocalBuckets(0.1); // 10/s, a burst of 2
    const now = 1_000_000;
    const waits = Array.from({ length: 5 }, () => buckets.take([provider, unlimited], now, 10_000).waitMs);
    expect(waits).toEqual([0, 0, 100, 200, 300]);
  });

  it('waits for the slowest layer and names it', () => {
    const buckets = createLocalBuckets(0.1); // provider 10/s burst 2; receiver 2/s burst 1
    const now = 5_000;
    expect(buckets.take([provider, receiver], now, 10_000)).toEqual({ taken: true, waitMs: 0, layer: 'provider' });
    expect(buckets.take([provider, receiver], now, 10_000)).toEqual({ taken: true, waitMs: 500, layer: 'receiver' });
  });

  it('charges nothing past the horizon', () => {
    const buckets = createLocalBuckets(0.1);
    const now = 0;
    buckets.take([receiver], now, 0);
    expect(buckets.take([receiver], now, 100)).toMatchObject({ taken: false, waitMs: 500 });
    // Not charged: the same slot is still the next one.
    expect(buckets.take([receiver], now, 1_000)).toMatchObject({ taken: true, waitMs: 500 });
    // Time passes: the slot comes.
    expect(buckets.take([receiver], now + 2_000, 0)).toMatchObject({ taken: true, waitMs: 0 });
  });
});
