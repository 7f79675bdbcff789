import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig, parseConfig } from '@sluice/core';
import { percentile } from '../src/otp-latency.js';
import { BOUNCE_EVERY, DEMO_DOMAINS, newsletterRecipient } from '../src/recipients.js';
import { formatStatus, providerColumns, receiverColumns, type StatusReading } from '../src/status.js';

const DEMO_CONFIG = resolve(import.meta.dirname, '../../../config/demo.yaml');

describe('the demo config', () => {
  it('parses, with the limits the quick start describes', () => {
    const config = loadConfig({ path: DEMO_CONFIG, env: {} });
    expect(config.providers.ses).toMatchObject({ kind: 'ses', sandbox: true, rate: 50, burst: 10, concurrency: 16 });
    expect(config.receivers.map((r) => [r.name, r.rate])).toEqual([
      ['gmail', 20],
      ['yahoo', 15],
    ]);
    expect(config.defaults.campaign.rate).toBe(1000);
  });
});

describe('status line', () => {
  const config = parseConfig({ receivers: [{ name: 'gmail', domains: ['gmail.test', 'googlemail.test'], rate: 20 }] });

  it('shows one column per receiver bucket, "-" where no policy limits it', () => {
    const columns = receiverColumns(config, ['gmail.test', 'googlemail.test', 'outlook.test']);
    expect(columns).toEqual([
      { label: 'gmail', signal: { kind: 'receiver', name: 'gmail' }, limit: 20 },
      { label: 'outlook', signal: { kind: 'receiver', name: 'outlook.test' }, limit: undefined },
    ]);
    expect(providerColumns(config)).toEqual([{ label: 'ses', signal: { kind: 'provider', name: 'ses' }, limit: 50 }]);
  });

  it('reads as one line', () => {
    const reading: StatusReading = {
      second: 0,
      providers: [{ label: 'ses', signal: { kind: 'provider', name: 'ses' }, limit: 50, sent: 49 }],
      receivers: [
        { label: 'gmail', signal: { kind: 'receiver', name: 'gmail' }, limit: 20, sent: 20 },
        { label: 'outlook', signal: { kind: 'receiver', name: 'outlook.test' }, limit: undefined, sent: 14 },
      ],
      backlog: { total: 18230, delayed: 640 },
      newsletter: { accepted: 20000, sent: 1710, rejected: 3, suppressed: 0 },
    };
    const otp = { n: 48, p50: 180, p99: 420.4, pending: 1, failed: 0, late: 0 };
    expect(formatStatus(12_400, reading, otp)).toBe(
      't=12s  ses 49/50/s | gmail 20/20 outlook 14/- | backlog 18230 (delayed 640) | ' +
        'OTP p50 180ms p99 420ms (n=48) | newsletter sent 1710/20000 rejected 3',
    );
  });
});

describe('OTP percentiles', () => {
  it('takes the nearest rank', () => {
    const sorted = Array.from({ length: 100 }, (_, i) => i + 1);
    expect(percentile(sorted, 50)).toBe(50);
    expect(percentile(sorted, 99)).toBe(99);
    expect(percentile([7], 99)).toBe(7);
    expect(percentile([], 50)).toBeUndefined();
  });
});

describe('newsletter recipients', () => {
  const recipients = Array.from({ length: 1000 }, (_, i) => newsletterRecipient(i));

  it('spread over the domains by weight, with a few bouncing addresses', () => {
    const bounces = recipients.filter((r) => r.startsWith('bounce-'));
    expect(bounces).toHaveLength(1000 / BOUNCE_EVERY);
    for (const b of bounces) expect(b).toMatch(/^bounce-\d+@(example|outlook)\.test$/);
    for (const { domain, weight } of DEMO_DOMAINS) {
      const share = recipients.filter((r) => r.startsWith('reader') && r.endsWith(`@${domain}`)).length / 10;
      expect(Math.abs(share - weight)).toBeLessThanOrEqual(1);
    }
    expect(new Set(recipients).size).toBe(recipients.length);
  });
});
