import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig, parseConfig, receiverFor } from '@sluice/core';

describe('config', () => {
  it('is complete with no file at all: the sandbox and a local Redis', () => {
    const config = loadConfig({ env: {}, path: undefined });
    expect(config.redis.url).toBe('redis://127.0.0.1:6379');
    expect(config.providers.ses).toMatchObject({ kind: 'ses', rate: 50 });
    expect(config.providers.ses!.accessKeyId).toBeUndefined();
  });

  it('names the bad field’s path', () => {
    expect(() => parseConfig({ providers: { ses: { kind: 'ses', rate: -1 } } })).toThrow(/providers\.ses\.rate: must be a positive number/);
    expect(() => parseConfig({ receivers: [{ name: 'gmail', domains: [], rate: 5 }] })).toThrow(/receivers\.0\.domains/);
    expect(() => parseConfig({ providers: { ses: { kind: 'ses', rate: 5, pool: 'warm' } } })).toThrow(/providers\.ses\.pool: names no pool/);
    expect(() => parseConfig({ reserves: { critical: 0.6, high: 0.5 } })).toThrow(/reserves: .*less than 1/);
    expect(() => parseConfig({ typo: 1 })).toThrow(/\(root\): Unrecognized key/i);
  });

  it('reads the file SLUICE_CONFIG names, and REDIS_URL and AWS credentials from the environment', () => {
    const dir = mkdtempSync(join(tmpdir(), 'sluice-config-'));
    const path = join(dir, 'sluice.yaml');
    writeFileSync(path, 'providers:\n  ses:\n    kind: ses\n    rate: 14\nreceivers:\n  - name: google\n    domains: [gmail.com, "*.google.com"]\n    rate: 5\n');
    const config = loadConfig({ env: { SLUICE_CONFIG: path, REDIS_URL: 'redis://r:6380', AWS_ACCESS_KEY_ID: 'AKID', AWS_SECRET_ACCESS_KEY: 's' } });
    expect(config.redis.url).toBe('redis://r:6380');
    expect(config.providers.ses).toMatchObject({ rate: 14, accessKeyId: 'AKID' });
    expect(receiverFor(config, 'gmail.com')).toEqual({ name: 'google', rate: 5, burst: undefined });
    expect(receiverFor(config, 'mail.google.com').name).toBe('google');
    expect(receiverFor(config, 'example.com')).toEqual({ name: 'example.com', rate: undefined, burst: undefined });
    writeFileSync(path, 'providers: [');
    expect(() => loadConfig({ env: { SLUICE_CONFIG: path } })).toThrow(/not valid YAML/);
    expect(() => loadConfig({ env: { SLUICE_CONFIG: join(dir, 'missing.yaml') } })).toThrow(/cannot read config file/);
  });
});
