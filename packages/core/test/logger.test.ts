import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { hashRecipient, loadConfig, loggerOptions, parseConfig, requestIdOf, requestSummary } from '@sluice/core';
import { pino } from 'pino';

const SECRETS = {
  sendgrid: 'SG.live-sendgrid-api-key-0123456789',
  mailgun: 'key-live-mailgun-0123456789abcdef',
  smtp: 'smtp-password-correct-horse',
  awsId: 'AKIAIOSFODNN7EXAMPLE',
  awsSecret: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY',
  signing: 'mailgun-webhook-signing-key-live',
  admin: 'admin-token-Vq3xL9pZ2mK7wR4tY8nB1cF6hJ0sD5gA',
  bearer: 'eyJhbGciOiJIUzI1NiJ9.bearer-token',
};

function configWithSecrets(recipients: 'hashed' | 'plain' = 'hashed') {
  return parseConfig({
    defaultProvider: 'sg',
    providers: {
      sg: { kind: 'sendgrid', rate: 10, apiKey: SECRETS.sendgrid },
      mg: { kind: 'mailgun', rate: 10, domain: 'mg.acme.test', apiKey: SECRETS.mailgun },
      relay: { kind: 'smtp', rate: 10, host: 'smtp.acme.test', user: 'sluice', password: SECRETS.smtp },
      ses: { kind: 'ses', rate: 10, accessKeyId: SECRETS.awsId, secretAccessKey: SECRETS.awsSecret },
    },
    api: { webhooks: { mailgun: { signingKey: SECRETS.signing } } },
    admin: { tokens: [{ actor: 'ops', token: SECRETS.admin }] },
    logging: { recipients },
  });
}

function capture(config?: Parameters<typeof loggerOptions>[1]) {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(chunk.toString());
      done();
    },
  });
  return { logger: pino(loggerOptions('sluice-test', config), stream), output: () => lines.join('') };
}

describe('logger', () => {
  it('never writes a credential, wherever it sits in a log line', () => {
    const config = configWithSecrets();
    const { logger, output } = capture(config);
    logger.info({ config }, 'config loaded');
    logger.info({ provider: config.providers.relay }, 'provider');
    logger.info({ auth: { user: 'sluice', pass: SECRETS.smtp } }, 'smtp auth');
    logger.info({ req: { headers: { authorization: `Bearer ${SECRETS.bearer}` } } }, 'request');
    const err = Object.assign(new Error('401 from the ESP'), {
      config: { headers: { Authorization: `Bearer ${SECRETS.bearer}` } },
      response: { config: { headers: { authorization: `Bearer ${SECRETS.bearer}` } } },
    });
    logger.error({ err }, 'send failed');
    logger.child({ apiKey: SECRETS.sendgrid }).info('child bindings');

    const text = output();
    for (const [name, secret] of Object.entries(SECRETS)) expect(text, name).not.toContain(secret);
    expect(text).toContain('[redacted]');
    // What is not a credential stays readable.
    expect(text).toContain('smtp.acme.test');
    expect(text).toContain('401 from the ESP');
  });

  it('hashes recipient addresses, stably, wherever they sit', () => {
    const { logger, output } = capture(configWithSecrets());
    logger.info({ to: 'Jane@Example.com', id: 'm1' }, 'sent');
    logger.info({ job: { data: { recipient: 'jane@example.com', email: 'bob@example.org' } } }, 'job');
    logger.info({ recipients: ['jane@example.com'] }, 'batch');
    logger.child({ address: 'jane@example.com' }).info('bound');
    logger.info({ address: 'http://127.0.0.1:8080' }, 'listening');

    const lines = output()
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    const jane = hashRecipient('jane@example.com');
    expect(jane).toMatch(/^h:[0-9a-f]{12}$/);
    expect(hashRecipient('JANE@example.COM')).toBe(jane);
    expect(lines[0]).toMatchObject({ to: jane, id: 'm1' });
    expect(lines[1]).toMatchObject({ job: { data: { recipient: jane, email: hashRecipient('bob@example.org') } } });
    expect(lines[2]).toMatchObject({ recipients: [jane] });
    expect(lines[3]).toMatchObject({ address: jane });
    // Not an address: left as it is.
    expect(lines[4]).toMatchObject({ address: 'http://127.0.0.1:8080' });
    expect(output().toLowerCase()).not.toContain('example.com');
  });

  it('hashes before the config is read, and writes addresses plain only when configured', () => {
    const early = capture();
    early.logger.info({ to: 'jane@example.com' }, 'before config');
    expect(early.output()).toContain(hashRecipient('jane@example.com'));

    const plain = capture(configWithSecrets('plain'));
    plain.logger.info({ to: 'jane@example.com', config: configWithSecrets('plain') }, 'sent');
    expect(plain.output()).toContain('"to":"jane@example.com"');
    expect(plain.output()).not.toContain(SECRETS.sendgrid);
    expect(loadConfig({ env: {}, path: undefined }).logging.recipients).toBe('hashed');
  });
});

describe('log level', () => {
  it('is logging.level (info by default), LOG_LEVEL over it, and a bad one fails naming the field', () => {
    expect(parseConfig({}).logging.level).toBe('info');
    expect(loadConfig({ env: { LOG_LEVEL: 'debug' } }).logging.level).toBe('debug');
    expect(() => parseConfig({ logging: { level: 'verbose' } })).toThrow(/logging\.level/);
    expect(() => loadConfig({ env: { LOG_LEVEL: 'loud' } })).toThrow(/LOG_LEVEL \(logging\.level\)/);

    const { logger, output } = capture(parseConfig({ logging: { level: 'warn' } }));
    logger.info({ event: 'quiet' }, 'not written');
    logger.warn({ event: 'loud' }, 'written');
    expect(output()).not.toContain('quiet');
    expect(output()).toContain('"event":"loud"');
  });
});

describe('request ids', () => {
  it("keeps a caller's plain id and makes one for anything else", () => {
    expect(requestIdOf('retry-7:abc/def')).toBe('retry-7:abc/def');
    for (const bad of [undefined, '', 'two words', 'x'.repeat(129), '"quoted"', ['a', 'b']])
      expect(requestIdOf(bad)).toMatch(/^[0-9a-f-]{36}$/);
    expect(requestSummary({ method: 'GET', url: '/a?token=secret', ip: '10.0.0.1' })).toEqual({
      method: 'GET',
      path: '/a',
      remoteAddress: '10.0.0.1',
    });
  });
});
