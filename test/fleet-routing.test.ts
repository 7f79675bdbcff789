import { describe, expect, it } from 'vitest';
import { maxInWindow, peakGuard, waitFor } from './support/fleet.js';
import { useFleet } from './support/use-fleet.js';

// Routing across providers: SES's own account limits (GetAccount) cap and pause it, a
// provider that stops answering is marked down, and the route's standby takes over.
const fleet = useFleet({
  schedulers: 1,
  workers: 2,
  scenario: { account: { maxSendRate: 8, max24HourSend: 40 } },
  config: {
    providers: {
      // Configured far above what the account allows.
      ses: { kind: 'ses', sandbox: true, rate: 50, burst: 10, quotaRefreshMs: 300 },
      // Nothing listens there: every attempt fails without an answer.
      dead: { kind: 'sendgrid', rate: 50, apiKey: 'SG.dead', endpoint: 'http://127.0.0.1:9', timeoutMs: 1_000 },
      relay: { kind: 'smtp', sandbox: true, rate: 50, burst: 10 },
    },
    routes: {
      transactional: [
        { provider: 'ses', weight: 1 },
        { provider: 'relay', weight: 0 },
      ],
      alerts: [
        { provider: 'dead', weight: 1 },
        { provider: 'relay', weight: 0 },
      ],
    },
    delivery: { retry: { transient_system: { baseMs: 300, maxMs: 600 } } },
    failover: { downAfter: 3, downForMs: 60_000 },
  },
});

const base = { from: 'app@acme.test', subject: 'hi', text: 'hello' };
const finalState = async (id: string) =>
  waitFor(
    async () => {
      const r = await fleet().client.messages.status(id);
      return r && ['sent', 'rejected', 'suppressed', 'expired', 'cancelled'].includes(r.state) ? r : null;
    },
    60_000,
    `final state of ${id}`,
  );

describe('SES account limits', () => {
  it('caps SES at MaxSendRate, stops at Max24HourSend, and the standby sends the rest', async () => {
    const sent = await fleet().client.sendBulk(
      Array.from({ length: 100 }, (_, i) => ({ ...base, to: `u${i}@example.test` })),
    );
    const records = await Promise.all(sent.map((s) => finalState(s.id)));
    expect(records.filter((r) => r.state !== 'sent')).toEqual([]);
    const ses = fleet()
      .sandbox.accepted()
      .filter((a) => a.protocol === 'ses');
    const smtp = fleet()
      .sandbox.accepted()
      .filter((a) => a.protocol === 'smtp');
    // Never over the daily quota, and never faster than MaxSendRate (+ its burst of 8).
    expect(ses.length).toBeLessThanOrEqual(40);
    expect(maxInWindow(ses.map((a) => a.arrivedAt))).toBeLessThanOrEqual(peakGuard(8, 8));
    expect(ses.length + smtp.length).toBe(100);
    expect(records.filter((r) => r.provider === 'relay').length).toBe(smtp.length);
    expect(smtp.length).toBeGreaterThanOrEqual(60);
    expect(fleet().sandbox.stats().duplicates).toBe(0);
  });
});

describe('a provider that stops answering', () => {
  it('is marked down after a few failures and its stream fails over to the standby', async () => {
    const sent = await fleet().client.sendBulk(
      Array.from({ length: 20 }, (_, i) => ({ ...base, to: `alert${i}@example.test`, stream: 'alerts' })),
    );
    const records = await Promise.all(sent.map((s) => finalState(s.id)));
    expect(records.every((r) => r.state === 'sent' && r.provider === 'relay')).toBe(true);
    // Those tried on the dead provider first say so in their log.
    const logs = await Promise.all(sent.map((s) => fleet().client.messages.attempts(s.id)));
    const failed = logs.flat().filter((a) => a.provider === 'dead');
    expect(failed.length).toBeGreaterThanOrEqual(1);
    expect(failed.every((a) => a.family === 'transient_system')).toBe(true);
    // Bounded: a handful of messages met the dead provider, not the whole stream.
    expect(new Set(logs.filter((l) => l.some((a) => a.provider === 'dead'))).size).toBeLessThanOrEqual(10);
  });
});
