import { describe, expect, it } from 'vitest';
import type { Admission } from '@sluice/dispatch';
import { useRedisPrefix } from '../../../test/support/redis-prefix.js';
import { useRig } from './admission-setup.js';

// A campaign held for a reserve it may borrow, on real Redis: provider `main` (100/s, a fifth of
// it kept for critical mail) binds, since campaigns and other receivers are not limited here.
const r = useRedisPrefix();
// A 1 s horizon: a hold for the provider's own slots (half of it) is longer than one for the reserve.
const HORIZON = 1_000;
const rig = useRig(r, {
  defaults: { campaign: { rate: 10_000 } },
  horizonsMs: { critical: HORIZON, high: HORIZON, normal: HORIZON, low: HORIZON },
});
const ctx = { campaignQueue: '{campaign-spring}' };

describe('admission: a hold for a lendable reserve', () => {
  it('ends earlier by how late the held queue’s next request came, so the reserve is asked for as it becomes lendable', async () => {
    const { admission, another, message, step } = rig();
    const spring = () => message({ campaignId: 'spring', priority: 'low', to: 'ann@other.example' });
    async function hold(engine: Admission): Promise<number> {
      for (let i = 0; i < 200; i++) {
        const result = await engine.admit(spring(), ctx);
        if (result.kind === 'hold') return result.ms;
      }
      throw new Error('the campaign was never held');
    }
    // The queue's next request comes 80 ms after each hold ends (by the engine's clock), ten times.
    for (let i = 0; i < 10; i++) step((await hold(admission)) + 80);
    // At the same moment, by the same limiter: the engine that measured the lateness (about 71 ms
    // on average) holds the queue that much less than one that measured none, down to 1 ms (a
    // millisecond or two of rounding and of time between the two asks allowed).
    const fresh = await hold(another());
    const late = await hold(admission);
    expect(fresh).toBeLessThanOrEqual(150); // the reserve's next lendable slot, about the 100 ms reach
    expect(fresh).toBeGreaterThan(1);
    expect(fresh - late).toBeGreaterThanOrEqual(Math.min(fresh - 2, 40));
  });
});
