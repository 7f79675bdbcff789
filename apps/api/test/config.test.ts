import { describe, expect, it } from 'vitest';
import { loadConfig, parseConfig } from '@sluice/core';
import { createApi } from '../src/api.js';
import { quietLogger } from './support.js';

describe('api and suppression config', () => {
  it('has defaults, and takes the webhook keys and the API keys pepper from the environment', () => {
    const pepper = 'env-pepper/Gh4jK7lP2oI5uY8tR1eW3qA6sD9fZ0x=';
    const config = loadConfig({
      env: {
        SENDGRID_WEBHOOK_PUBLIC_KEY: 'MFkw-key',
        MAILGUN_WEBHOOK_SIGNING_KEY: 'mg-sign',
        SLUICE_API_KEY_PEPPER: pepper,
      },
      path: undefined,
    });
    expect(config.api).toEqual({
      host: '127.0.0.1',
      port: 8080,
      trustProxy: false,
      keys: { pepper },
      webhooks: {
        ses: { topicArns: [] },
        sendgrid: { publicKey: 'MFkw-key' },
        mailgun: { signingKey: 'mg-sign' },
        maxAgeSeconds: 300,
      },
    });
    expect(config.suppression.softBounces).toEqual({ count: 3, windowMs: 7 * 86_400_000 });
  });

  it('refuses a trustProxy that believes anyone, or a bad address, by name', () => {
    expect(() => parseConfig({ api: { trustProxy: true } })).toThrow(/api\.trustProxy: must be false, a list/);
    expect(() => parseConfig({ api: { trustProxy: ['10.0.0.0/33'] } })).toThrow(/api\.trustProxy/);
    expect(parseConfig({ api: { trustProxy: ['10.0.0.0/8', '::1'] } }).api.trustProxy).toEqual(['10.0.0.0/8', '::1']);
    expect(parseConfig({ api: { trustProxy: 2 } }).api.trustProxy).toBe(2);
  });

  it('refuses a weak pepper by name, without quoting it', () => {
    expect(() => loadConfig({ env: { SLUICE_API_KEY_PEPPER: 'short' }, path: undefined })).toThrow(
      /SLUICE_API_KEY_PEPPER must be at least 32 characters/,
    );
    expect(() => parseConfig({ api: { keys: { pepper: 'a'.repeat(40) } } })).toThrow(
      /api\.keys\.pepper: has 1 distinct/,
    );
  });

  it('names the bad field', () => {
    expect(() => parseConfig({ api: { webhooks: { ses: { topicArns: ['ses-events'] } } } })).toThrow(
      /api\.webhooks\.ses\.topicArns\.0: must be an SNS topic ARN/,
    );
    expect(() => parseConfig({ api: { webhooks: { ses: { certHostPattern: '(' } } } })).toThrow(
      /api\.webhooks\.ses\.certHostPattern: must be a valid regular expression/,
    );
    expect(() => parseConfig({ suppression: { softBounces: { count: 0 } } })).toThrow(
      /suppression\.softBounces\.count/,
    );
    expect(() => parseConfig({ api: { webhooks: { maxAgeSeconds: 0 } } })).toThrow(/api\.webhooks\.maxAgeSeconds/);
  });

  it('refuses at start a SendGrid key that is not a P-256 public key, naming the field', () => {
    const config = parseConfig({ api: { webhooks: { sendgrid: { publicKey: 'bm90IGEga2V5' } } } });
    expect(() => createApi({ config, logger: quietLogger, redis: undefined })).toThrow(
      /api\.webhooks\.sendgrid\.publicKey/,
    );
  });
});
