import { describe, expect, it } from 'vitest';
import { parseConfig, type RetryCounts } from '@sluice/core';
import { planRetry } from '@sluice/dispatch';

const config = parseConfig({
  delivery: {
    maxAttempts: 6,
    retry: {
      transient_system: { baseMs: 1_000, maxMs: 8_000, maxAttempts: 5 },
      unknown: { baseMs: 1_000, maxMs: 1_000, maxAttempts: 2 },
    },
  },
});
const top = () => 0.999_999;

describe('retries', () => {
  it('back off exponentially with jitter, capped, within the family’s attempts', () => {
    let counts: RetryCounts | undefined;
    const delays: number[] = [];
    for (let i = 0; i < 4; i++) {
      const plan = planRetry(config, 'transient_system', counts, undefined, top);
      if (!plan.retry) throw new Error(plan.why);
      delays.push(plan.delayMs);
      counts = plan.counts;
    }
    expect(delays).toEqual([1_000, 2_000, 4_000, 8_000]);
    expect(planRetry(config, 'transient_system', counts)).toMatchObject({
      retry: false,
      why: expect.stringMatching(/5 × transient_system/),
    });
    // Jitter: the lower half of the window is possible too.
    const low = planRetry(config, 'transient_system', undefined, undefined, () => 0);
    expect(low).toMatchObject({ delayMs: 500 });
  });

  it('honour a receiver’s hint when it asks for longer than the backoff', () => {
    expect(planRetry(config, 'throttled', undefined, 45_000, top)).toMatchObject({ retry: true, delayMs: 45_000 });
    expect(planRetry(config, 'throttled', undefined, 10, top)).toMatchObject({ retry: true, delayMs: 1_000 });
  });

  it('treat an unknown reply as temporary with a low cap', () => {
    const first = planRetry(config, 'unknown', undefined);
    if (!first.retry) throw new Error('no retry');
    // Two attempts in all: the second failure is the last.
    expect(planRetry(config, 'unknown', first.counts)).toMatchObject({
      retry: false,
      why: expect.stringMatching(/2 × unknown/),
    });
    // A family the schedule does not know counts as unknown.
    expect(planRetry(config, 'martian', first.counts)).toMatchObject({ retry: false });
  });

  it('stop at delivery.maxAttempts across families, but do not count throttles there', () => {
    let counts: RetryCounts = { failures: 5, byFamily: { transient_system: 1 } };
    expect(planRetry(config, 'mailbox_temporary', counts)).toMatchObject({
      retry: false,
      why: expect.stringMatching(/delivery\.maxAttempts/),
    });
    const throttled = planRetry(config, 'throttled', counts);
    expect(throttled).toMatchObject({ retry: true, counts: { failures: 5, byFamily: { throttled: 1 } } });
    counts = { failures: 0, byFamily: {} };
    expect(planRetry(config, 'greylisted', counts)).toMatchObject({
      retry: true,
      counts: { failures: 1, byFamily: { greylisted: 1 } },
    });
  });
});
