import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig, parseConfig, receiverFor } from '@sluice/core';

describe('config', () => {
  it('is complete with no file at all: the sandbox and a local Redis', () => {
    const config = loadConfig({ env: {}, path: undefined });
    expect(config.redis.url).toBe('redis://127.0.0.1:6379');
    expect(config.providers.ses).toMatchObject({ kind: 'ses', sandbox: true, rate: 50 });
    expect(config.providers.ses).not.toHaveProperty('accessKeyId');
  });

  it('takes every provider kind, with its own fields and credentials from the environment', () => {
    const dir = mkdtempSync(join(tmpdir(), 'sluice-config-'));
    const path = join(dir, 'sluice.yaml');
    writeFileSync(
      path,
      [
        'providers:',
        '  ses: { kind: ses, rate: 10 }',
        '  sg: { kind: sendgrid, rate: 20, ipPoolName: warm }',
        '  mg: { kind: mailgun, rate: 30, domain: mg.acme.test }',
        '  relay: { kind: smtp, rate: 40, host: smtp.acme.test, port: 2525, user: sluice }',
        'routes:',
        '  marketing: [{ provider: sg, weight: 3 }, { provider: mg }, { provider: relay, weight: 0 }]',
      ].join('\n'),
    );
    const config = loadConfig({
      env: { SLUICE_CONFIG: path, SENDGRID_API_KEY: 'SG.k', MAILGUN_API_KEY: 'mk', SMTP_PASSWORD: 'pw' },
    });
    expect(config.providers.sg).toMatchObject({ kind: 'sendgrid', apiKey: 'SG.k', ipPoolName: 'warm' });
    expect(config.providers.mg).toMatchObject({ kind: 'mailgun', apiKey: 'mk', domain: 'mg.acme.test' });
    expect(config.providers.relay).toMatchObject({
      kind: 'smtp',
      host: 'smtp.acme.test',
      password: 'pw',
      secure: false,
    });
    expect(config.routes.marketing).toEqual([
      { provider: 'sg', weight: 3 },
      { provider: 'mg', weight: 1 },
      { provider: 'relay', weight: 0 },
    ]);
    expect(config.delivery.retry.greylisted).toMatchObject({ baseMs: 300_000, maxAttempts: 5 });
    const moved = loadConfig({ env: { SLUICE_CONFIG: path, SLUICE_SANDBOX_SMTP: 'sandbox:2525' } });
    expect(moved.sandbox).toMatchObject({ smtpHost: 'sandbox', smtpPort: 2525 });
    expect(() => loadConfig({ env: { SLUICE_CONFIG: path, SLUICE_SANDBOX_SMTP: 'sandbox' } })).toThrow(
      /SLUICE_SANDBOX_SMTP must be host:port/,
    );
    const ports = loadConfig({ env: { SLUICE_CONFIG: path, SLUICE_METRICS_PORT: '9464', SLUICE_ADMIN_PORT: '0' } });
    expect([ports.metrics.port, ports.admin.port]).toEqual([9464, 0]);
    expect(() => loadConfig({ env: { SLUICE_CONFIG: path, SLUICE_ADMIN_PORT: '80a' } })).toThrow(
      /SLUICE_ADMIN_PORT must be a port number, got "80a"/,
    );
    expect(() => loadConfig({ env: { SLUICE_CONFIG: path, SLUICE_METRICS_PORT: '70000' } })).toThrow(
      /SLUICE_METRICS_PORT must be a port number/,
    );
  });

  it('names the bad field of a provider kind, a route and a retry schedule', () => {
    expect(() => parseConfig({ providers: { ses: { kind: 'postal', rate: 1 } } })).toThrow(
      /providers\.ses\.kind: .*ses, sendgrid, mailgun, smtp/,
    );
    expect(() =>
      parseConfig({ providers: { ses: { kind: 'ses', sandbox: true, rate: 1 }, mg: { kind: 'mailgun', rate: 1 } } }),
    ).toThrow(/providers\.mg\.domain/);
    expect(() => parseConfig({ routes: { marketing: [{ provider: 'nope' }] } })).toThrow(
      /routes\.marketing\.0\.provider: names no provider/,
    );
    expect(() => parseConfig({ routes: { marketing: [{ provider: 'ses', weight: 0 }] } })).toThrow(
      /routes\.marketing: needs a provider with a weight/,
    );
    expect(() => parseConfig({ delivery: { retry: { throttled: { baseMs: -1 } } } })).toThrow(
      /delivery\.retry\.throttled\.baseMs/,
    );
    expect(() => parseConfig({ delivery: { retry: { bad_recipient: { baseMs: 1 } } } })).toThrow(
      /delivery\.retry\.bad_recipient/,
    );
  });

  it('names the bad field’s path', () => {
    expect(() => parseConfig({ providers: { ses: { kind: 'ses', sandbox: true, rate: -1 } } })).toThrow(
      /providers\.ses\.rate: must be a positive number/,
    );
    expect(() => parseConfig({ receivers: [{ name: 'gmail', domains: [], rate: 5 }] })).toThrow(
      /receivers\.0\.domains/,
    );
    expect(() => parseConfig({ providers: { ses: { kind: 'ses', sandbox: true, rate: 5, pool: 'warm' } } })).toThrow(
      /providers\.ses\.pool: names no pool/,
    );
    expect(() => parseConfig({ reserves: { critical: 0.6, high: 0.5 } })).toThrow(/reserves: .*less than 1/);
    expect(() => parseConfig({ typo: 1 })).toThrow(/typo: unknown key/);
  });

  it('names the bad field in every part of the file (providers, receivers, delivery, surfaces), with its own message', () => {
    expect(() => parseConfig({ pools: { default: { state: 'warming' } } })).toThrow(
      /pools\.default\.warmup: a warming pool needs a warmup schedule/,
    );
    expect(() => parseConfig({ failover: { throttledBelow: 0 } })).toThrow(/failover\.throttledBelow/);
    expect(() => parseConfig({ organisations: { patterns: [{ name: 'x y', mx: ['mx.test'] }] } })).toThrow(
      /organisations\.patterns\.0\.name: must match/,
    );
    expect(() => parseConfig({ worker: { lockDurationMs: 0 } })).toThrow(/worker\.lockDurationMs/);
    expect(() => parseConfig({ suppression: { softBounces: { count: 0 } } })).toThrow(
      /suppression\.softBounces\.count/,
    );
    expect(() => parseConfig({ admin: { tokens: [{ actor: 'a', token: 'short' }] } })).toThrow(
      /admin\.tokens\.0\.token: must be at least 32 characters/,
    );
    expect(() => parseConfig({ api: { webhooks: { ses: { topicArns: ['topic'] } } } })).toThrow(
      /api\.webhooks\.ses\.topicArns\.0: must be an SNS topic ARN/,
    );
    expect(() => parseConfig({ api: { webhooks: { ses: { certHostPattern: '(' } } } })).toThrow(
      /certHostPattern: must be a valid regular expression/,
    );
  });

  it('without the built-in organisations, knows only the configured ones (no MX table to match)', () => {
    const receivers = [{ name: 'google', organisation: 'google', rate: 20 }];
    expect(parseConfig({ receivers }).organisations.builtIn).toBe(true);
    expect(() => parseConfig({ receivers, organisations: { builtIn: false } })).toThrow(
      /receivers\.0\.organisation: names no organisation/,
    );
    const own = parseConfig({
      receivers,
      organisations: { builtIn: false, patterns: [{ name: 'google', mx: ['*.google.com'] }] },
    });
    expect(own.organisations).toMatchObject({ builtIn: false, patterns: [{ name: 'google', mx: ['*.google.com'] }] });
  });

  it('reads the file SLUICE_CONFIG names and REDIS_URL, and leaves AWS keys to the AWS credential chain', () => {
    const dir = mkdtempSync(join(tmpdir(), 'sluice-config-'));
    const path = join(dir, 'sluice.yaml');
    writeFileSync(
      path,
      'providers:\n  ses:\n    kind: ses\n    rate: 14\nreceivers:\n  - name: google\n    domains: [gmail.com, "*.google.com"]\n    rate: 5\n',
    );
    const config = loadConfig({
      env: { SLUICE_CONFIG: path, REDIS_URL: 'redis://r:6380', AWS_ACCESS_KEY_ID: 'AKID', AWS_SECRET_ACCESS_KEY: 's' },
    });
    expect(config.redis.url).toBe('redis://r:6380');
    // The SDK's default chain reads AWS_* itself (with AWS_SESSION_TOKEN): the config holds no copy.
    expect(config.providers.ses).toMatchObject({ rate: 14, sandbox: false });
    expect(config.providers.ses).not.toHaveProperty('accessKeyId');
    expect(receiverFor(config, 'gmail.com')).toEqual({ name: 'google', rate: 5, burst: undefined });
    expect(receiverFor(config, 'mail.google.com').name).toBe('google');
    expect(receiverFor(config, 'example.com')).toEqual({ name: 'example.com', rate: undefined, burst: undefined });
    writeFileSync(path, 'providers: [');
    expect(() => loadConfig({ env: { SLUICE_CONFIG: path } })).toThrow(/not valid YAML/);
    expect(() => loadConfig({ env: { SLUICE_CONFIG: join(dir, 'missing.yaml') } })).toThrow(/cannot read config file/);
  });
});
