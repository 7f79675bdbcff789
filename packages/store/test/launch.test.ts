import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createFeedback, gateFor, parseForecast, readGate, type LaunchRecord } from '@sluice/store';
import { useRedisPrefix } from '../../../test/support/redis-prefix.js';

const r = useRedisPrefix();
const T = Date.UTC(2026, 11, 1, 9);

function record(
  over: Partial<LaunchRecord['decision']> & Pick<NonNullable<LaunchRecord['decision']>, 'kind'>,
): LaunchRecord {
  return {
    campaignId: 'c',
    requestedAt: T,
    requestedBy: 'ana',
    stream: 'transactional',
    forecast: { total: 90, domains: { 'gmail.com': 60, 'yahoo.com': 30 } },
    decision: {
      rule: 'fits',
      reason: 'why',
      decidedAt: T,
      decidedBy: 's',
      approval: 'not-needed',
      startAt: T,
      deadline: T + 1_000,
      shared: { limit: 'provider', key: 'ses', rate: 1, detail: '' },
      receivers: [],
      receiverCount: 0,
      checks: {
        storage: { usedBytes: 0, budgetBytes: 1, share: 0, source: 'budget' },
        feed: {},
        circuits: { share: 0, receivers: [] },
      },
      ...over,
    },
    stopped: {},
  };
}

describe('the launch gate', () => {
  it('opens wave after wave as the clock passes their starts', () => {
    const waves = [
      { atMs: T, count: 30, share: 1 / 3, upTo: 30 },
      { atMs: T + 100, count: 30, share: 1 / 3, upTo: 60 },
      { atMs: T + 200, count: 30, share: 1 / 3, upTo: 90 },
    ];
    const split = gateFor(record({ kind: 'split', approval: 'approved', waves }));
    expect(readGate(split, T - 1)).toEqual({ state: 'wait', untilMs: T, reason: 'wave 1 of 3 starts then' });
    expect(readGate(split, T)).toEqual({ state: 'open', maxPosition: 30, nextAtMs: T + 100, stopped: {} });
    expect(readGate(split, T + 150)).toEqual({ state: 'open', maxPosition: 60, nextAtMs: T + 200, stopped: {} });
    expect(readGate(split, T + 200)).toEqual({ state: 'open', stopped: {} });
    expect(readGate(gateFor(record({ kind: 'split', approval: 'required', waves })), T + 500)).toMatchObject({
      state: 'wait',
      untilMs: T + 2_500,
    });
    const delay = gateFor(record({ kind: 'delay', approval: 'approved', untilMs: T + 50 }));
    expect(readGate(delay, T)).toMatchObject({ state: 'wait', untilMs: T + 50 });
    expect(readGate(delay, T + 50)).toEqual({ state: 'open', stopped: {} });
    expect(readGate(gateFor(record({ kind: 'reject', rule: 'past-expiry' })), T)).toMatchObject({
      state: 'refused',
      code: 'campaign_rejected',
    });
    expect(readGate(null, T)).toMatchObject({ state: 'refused', code: 'campaign_not_launched' });
  });

  it("lists a stopped receiver's domains with the reason", () => {
    const stopped = {
      ...record({ kind: 'accept' }),
      stopped: { yahoo: { reason: 'late', at: T, domains: ['yahoo.com', 'ymail.com'] } },
    };
    expect(readGate(gateFor(stopped), T)).toEqual({
      state: 'open',
      stopped: { 'yahoo.com': 'receiver yahoo stopped: late', 'ymail.com': 'receiver yahoo stopped: late' },
    });
  });
});

describe('the forecast', () => {
  it('scales a sample to its total by the largest remainder, and names a bad field', () => {
    expect(parseForecast({ total: 10, sample: { 'A.example': 1, 'b.example': 1, 'c.example': 1 } })).toEqual({
      total: 10,
      domains: { 'a.example': 4, 'b.example': 3, 'c.example': 3 },
      sampleTotal: 3,
    });
    expect(() => parseForecast({ total: 10 })).toThrow(
      expect.objectContaining({ code: 'invalid_argument', path: 'forecast.domains' }),
    );
    expect(() => parseForecast({ total: 0, domains: {} })).toThrow(expect.objectContaining({ path: 'forecast.total' }));
    expect(() => parseForecast({ total: 1, domains: { 'x.example': 1.5 } })).toThrow(
      expect.objectContaining({ path: 'forecast.domains."x.example"' }),
    );
  });
});

it("records when an ESP event was last applied, per provider (the suppression feed's freshness)", async () => {
  const feedback = createFeedback({ redis: r.redis, keys: r.keys, now: () => T });
  await feedback.apply({
    provider: 'sendgrid',
    kind: 'delivered',
    recipient: 'x@example.test',
    at: T,
    reason: '',
    eventId: randomUUID(),
  });
  expect(await r.redis.hgetall(r.keys.feedApplied())).toEqual({ sendgrid: String(T) });
});
