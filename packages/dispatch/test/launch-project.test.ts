import { describe, expect, it } from 'vitest';
import { parseConfig } from '@sluice/core';
import { decideLaunch, shareRates, type ProjectionInput } from '@sluice/dispatch';
import type { LaunchLimit } from '@sluice/store';

const HOUR = 3_600_000;
const NOW = Date.UTC(2026, 11, 1, 9);
const settings = parseConfig({}).launch;
const provider: LaunchLimit = { limit: 'provider', key: 'ses', rate: 100, detail: '100/s' };
const checks = {
  storage: { usedBytes: 1e6, budgetBytes: 1e9, share: 0.001, source: 'budget' as const },
  feed: { ses: 1_000 },
  circuits: { share: 0, receivers: [] },
};

/** 1,000,000 recipients: gmail 600k (no limit of its own), yahoo 300k at 10/s, rest 100k. */
function input(over: Partial<ProjectionInput> = {}): ProjectionInput {
  return {
    now: NOW,
    total: 1_000_000,
    receivers: [
      { receiver: 'gmail', domains: ['gmail.com'], count: 600_000, own: [] },
      {
        receiver: 'yahoo',
        domains: ['yahoo.com'],
        count: 300_000,
        own: [{ limit: 'receiver', key: 'yahoo', rate: 10, detail: '10/s' }],
      },
      { receiver: 'rest.example', domains: ['rest.example'], count: 100_000, own: [] },
    ],
    shared: [provider, { limit: 'campaign', key: 'spring', rate: 1000, detail: '1000/s' }],
    lifetimeMs: 72 * HOUR,
    checks,
    settings,
    ...over,
  };
}

describe('the launch projection', () => {
  it('shares the binding shared limit in proportion among receivers their own limits do not bind', () => {
    const shared = shareRates(input().receivers, provider);
    const by = Object.fromEntries(shared.map((s) => [s.receiver.receiver, s]));
    // yahoo takes its own 10/s; gmail and the rest split the other 90/s by their counts (6:1).
    expect(by.yahoo).toMatchObject({ rate: 10, binds: { limit: 'receiver', key: 'yahoo' } });
    expect(by.gmail!.rate).toBeCloseTo((90 * 6) / 7, 6);
    expect(by.gmail!.binds).toMatchObject({ limit: 'provider', key: 'ses' });
    expect(by['rest.example']!.rate).toBeCloseTo(90 / 7, 6);
  });

  it('accepts a forecast every receiver finishes within the class lifetime, naming what binds each', () => {
    const d = decideLaunch(input());
    expect(d).toMatchObject({ kind: 'accept', rule: 'fits', startAt: NOW, deadline: NOW + 72 * HOUR });
    // yahoo: 300,000 at 10/s = 30,000 s, the latest; gmail and the rest together at 90/s: 700,000/90 s.
    expect(d.receivers[0]).toMatchObject({ receiver: 'yahoo', late: false, finishAt: NOW + 30_000_000 });
    expect(d.receivers[1]!.finishAt).toBe(Math.ceil(NOW + (700_000 / 90) * 1000));
    expect(d.shared).toMatchObject({ limit: 'provider', key: 'ses' });
  });

  it('rejects or splits a forecast that passes the lifetime at one receiver, as configured', () => {
    const slow = input({ lifetimeMs: 4 * HOUR }); // yahoo needs 8.3 h at 10/s
    const rejected = decideLaunch({ ...slow, settings: { ...settings, onPastExpiry: 'reject' } });
    expect(rejected).toMatchObject({ kind: 'reject', rule: 'past-expiry' });
    expect(rejected.reason).toContain("yahoo's last of 300000 recipients would go at");
    expect(rejected.reason).toContain('bound by receiver yahoo');

    const split = decideLaunch({ ...slow, settings: { ...settings, onPastExpiry: 'split' } });
    expect(split).toMatchObject({ kind: 'split', rule: 'past-expiry' });
    // 30,000 s of yahoo in waves of at most 4 h: 3 waves of a third, 10,000 s apart.
    expect(split.waves).toEqual([
      { atMs: NOW, count: 333_334, share: 0.333334, upTo: 333_334 },
      { atMs: NOW + 10_000_000, count: 333_333, share: 0.333333, upTo: 666_667 },
      { atMs: NOW + 20_000_000, count: 333_333, share: 0.333333, upTo: 1_000_000 },
    ]);
    expect(decideLaunch({ ...slow, settings: { ...settings, maxWaves: 2 } })).toMatchObject({
      kind: 'reject',
      rule: 'too-many-waves',
    });
    // Waves cannot beat the campaign's own expiry.
    expect(decideLaunch({ ...input(), expiresAt: NOW + 4 * HOUR })).toMatchObject({ kind: 'reject' });
  });

  it('holds a launch while open circuits cover a material share, and not for a small one', () => {
    const until = NOW + 600_000;
    const circuit = (receiver: string, share: number): ProjectionInput => {
      const base = input();
      return {
        ...base,
        receivers: base.receivers.map((r) => (r.receiver === receiver ? { ...r, circuitUntilMs: until } : r)),
        checks: { ...checks, circuits: { share, receivers: [receiver] } },
      };
    };
    expect(decideLaunch(circuit('yahoo', 0.3))).toMatchObject({ kind: 'held', rule: 'circuit', untilMs: until });
    expect(decideLaunch(circuit('rest.example', 0.1))).toMatchObject({ kind: 'held', rule: 'circuit' });
    const small = decideLaunch({ ...circuit('rest.example', 0.1), settings: { ...settings, materialShare: 0.2 } });
    expect(small.kind).toBe('accept');
    // The small one's recipients start after its circuit.
    expect(small.receivers.find((r) => r.receiver === 'rest.example')!.circuitUntilMs).toBe(until);
  });

  it('rejects at critical storage, holds at high storage or a stale feed, delays while every provider is paused', () => {
    const storage = (share: number): ProjectionInput => ({
      ...input(),
      checks: { ...checks, storage: { ...checks.storage, share } },
    });
    expect(decideLaunch(storage(0.96))).toMatchObject({ kind: 'reject', rule: 'storage-critical' });
    expect(decideLaunch(storage(0.85))).toMatchObject({ kind: 'held', rule: 'storage-high' });
    expect(decideLaunch({ ...input(), checks: { ...checks, feed: { ses: 2 * HOUR } } })).toMatchObject({
      kind: 'held',
      rule: 'feed-stale',
    });
    expect(decideLaunch({ ...input(), checks: { ...checks, feed: { ses: null } } }).kind).toBe('accept');
    expect(decideLaunch({ ...input(), pausedUntilMs: NOW + HOUR })).toMatchObject({
      kind: 'delay',
      rule: 'provider-paused',
      untilMs: NOW + HOUR,
      startAt: NOW + HOUR,
    });
  });

  it('names a warm-up cap or the daily quota when it binds', () => {
    const base = input();
    const warm = decideLaunch({
      ...base,
      receivers: base.receivers.map((r) =>
        r.receiver === 'gmail'
          ? { ...r, own: [{ limit: 'warmup', key: 'new', rate: 100_000 / 86_400, detail: '100000 a day (warm-up)' }] }
          : r,
      ),
    });
    // 600,000 at 100,000 a day: 6 days, so two waves of 72 h.
    expect(warm).toMatchObject({ kind: 'split', waves: [{ atMs: NOW }, { atMs: NOW + 3 * 86_400_000 }] });
    expect(warm.receivers[0]).toMatchObject({ receiver: 'gmail', late: true, binds: { limit: 'warmup' } });
    const quota = decideLaunch({
      ...base,
      shared: [...base.shared, { limit: 'quota', key: 'ses', rate: 2, detail: '0 left of Max24HourSend 50000' }],
    });
    expect(quota.shared).toMatchObject({ limit: 'quota', key: 'ses' });
    expect(quota.receivers[0]!.binds.limit).toBe('quota');
  });
});
