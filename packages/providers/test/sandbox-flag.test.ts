import { parseConfig } from '@sluice/core';
import { describe, expect, it } from 'vitest';
import { adapter, closedPort, message, send, startSandbox, type Kind } from './support.js';

const HTTP_KINDS: Kind[] = ['ses', 'sendgrid', 'mailgun'];

const KEYS: Record<Kind, Record<string, string>> = {
  ses: { accessKeyId: 'AKIDTEST', secretAccessKey: 'secret' },
  sendgrid: { apiKey: 'SG.test-key' },
  mailgun: { apiKey: 'test-key' },
  smtp: {},
};

describe.each(HTTP_KINDS)('the %s adapter and the sandbox', (kind) => {
  it('a real one with an endpoint and keys sends to the endpoint, never to the embedded sandbox', async () => {
    const endpoint = await startSandbox();
    // The embedded sandbox's address leads nowhere: a send that went there would fail.
    const port = await closedPort();
    const provider = adapter(
      kind,
      { url: `http://127.0.0.1:${port}`, smtpPort: port },
      { endpoint: endpoint.url, ...KEYS[kind] },
    );
    expect(provider.sandbox).toBe(false);
    await provider.ready();
    const { outcome, messageId } = await send(provider, message('ok@accept.test'));
    expect(outcome, JSON.stringify(outcome)).toMatchObject({ kind: 'accepted' });
    expect(endpoint.accepted().filter((r) => r.messageId === messageId)).toHaveLength(1);
  });

  it('sandbox: true sends to the embedded sandbox and says so', async () => {
    const sandbox = await startSandbox();
    const provider = adapter(kind, sandbox, { sandbox: true });
    expect(provider.sandbox).toBe(true);
    await provider.ready();
    const { outcome, messageId } = await send(provider, message('ok@accept.test'));
    expect(outcome, JSON.stringify(outcome)).toMatchObject({ kind: 'accepted' });
    expect(sandbox.accepted().filter((r) => r.messageId === messageId)).toHaveLength(1);
  });

  it('sandbox: true with an endpoint or keys of its own is refused by the config, naming the field', () => {
    expect(() =>
      parseConfig({
        providers: {
          ses: {
            kind,
            rate: 1,
            sandbox: true,
            endpoint: 'http://127.0.0.1:1',
            ...(kind === 'mailgun' ? { domain: 'x.test' } : {}),
          },
        },
      }),
    ).toThrow(/providers\.ses\.endpoint: a sandbox provider sends to the local sandbox/);
  });
});

describe('a real provider without what it needs refuses to start, naming it', () => {
  it.each([
    ['sendgrid', /providers\.p\.apiKey: a real SendGrid provider needs an API key \(apiKey or SENDGRID_API_KEY\)/],
    ['mailgun', /providers\.p\.apiKey: a real Mailgun provider needs an API key \(apiKey or MAILGUN_API_KEY\)/],
  ] as const)('%s without an API key', async (kind, error) => {
    const sandbox = await startSandbox();
    expect(() => adapter(kind, sandbox, { endpoint: sandbox.url })).toThrow(error);
  });

  it('smtp without a host', () => {
    expect(() => parseConfig({ providers: { relay: { kind: 'smtp', rate: 1 } }, defaultProvider: 'relay' })).toThrow(
      /providers\.relay\.host: a real SMTP provider needs a host/,
    );
  });
});

describe('environment: production', () => {
  const providers = { ses: { kind: 'ses', rate: 1, sandbox: true } };

  it('refuses a sandbox provider', () => {
    expect(() => parseConfig({ environment: 'production', providers })).toThrow(
      /providers\.ses\.sandbox: a sandbox provider in production: its mail never leaves; name it in allowSandbox/,
    );
  });

  it('takes one allowed by name, and refuses a name that is no provider', () => {
    expect(parseConfig({ environment: 'production', allowSandbox: ['ses'], providers }).providers.ses?.sandbox).toBe(
      true,
    );
    expect(() => parseConfig({ environment: 'production', allowSandbox: ['ses', 'sez'], providers })).toThrow(
      /allowSandbox\.1: names no provider/,
    );
  });

  it('the built-in defaults are a sandbox provider, and say so', () => {
    expect(parseConfig({}).providers.ses).toMatchObject({ kind: 'ses', sandbox: true });
    expect(() => parseConfig({ environment: 'production' })).toThrow(/providers\.ses\.sandbox/);
  });
});
