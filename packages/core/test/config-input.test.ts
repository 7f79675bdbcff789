import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { MAX_CONFIG_DEPTH, SluiceError, loadConfig, parseConfig } from '@sluice/core';

// Config documents that were taken as if nothing were wrong (issue 12, defect 3): a
// provider named `__proto__` vanished, a NUL in redis.url went through, and 5,000
// brackets overflowed the stack. Each is now one `invalid_config` naming where.

const dir = mkdtempSync(join(tmpdir(), 'sluice-config-input-'));
let files = 0;

/** Loads `text` as the config file; returns the error it throws. */
function refusal(text: string, env: NodeJS.ProcessEnv = {}): SluiceError {
  const path = join(dir, `c${files++}.yaml`);
  writeFileSync(path, text);
  try {
    loadConfig({ path, env });
  } catch (err) {
    expect(err).toBeInstanceOf(SluiceError);
    expect((err as SluiceError).code).toBe('invalid_config');
    return err as SluiceError;
  }
  throw new Error('the config was accepted');
}

describe('config documents refused as a whole', () => {
  it('refuses a provider named __proto__ (YAML, JSON or an object) instead of dropping it', () => {
    const yaml = refusal(
      ['providers:', '  __proto__: { kind: ses, rate: 5 }', '  ses: { kind: ses, rate: 5 }'].join('\n'),
    );
    expect(yaml.path).toBe('providers.__proto__');
    expect(yaml.message).toMatch(/providers\.__proto__: "__proto__" is a reserved word/);
    const json = refusal('{"providers": {"__proto__": {"kind": "ses", "rate": 5}}}');
    expect(json.path).toBe('providers.__proto__');
    expect(() => parseConfig(JSON.parse('{"pools": {"__proto__": {}}}'))).toThrow(/pools\.__proto__/);
  });

  it('refuses constructor and prototype as names, keys or values that name something', () => {
    expect(refusal('routes:\n  constructor: [{ provider: ses }]\n').path).toBe('routes.constructor');
    // `'constructor' in {}` is true: this one used to pass the "names a provider" check.
    expect(refusal('defaultProvider: constructor\n').path).toBe('defaultProvider');
    expect(refusal('receivers: [{ name: prototype, domains: [a.test], rate: 1 }]\n').path).toBe('receivers.0.name');
    // Not reserved, but inherited: `toString` is no provider of ours either.
    expect(refusal('defaultProvider: toString\n').message).toMatch(/defaultProvider: names no provider/);
  });

  it('refuses control characters in URLs, hosts, names and keys, from the file or the environment', () => {
    expect(refusal('redis: { url: "redis://127.0.0.1:6379\\0" }\n').path).toBe('redis.url');
    expect(refusal('sandbox: { url: "http://127.0.0.1:4566/\\tx" }\n').message).toMatch(
      /sandbox\.url: must not contain/,
    );
    expect(refusal('api: { host: "127.0.0.1\\n" }\n').path).toBe('api.host');
    expect(refusal('"pro\\u001bviders": {}\n').message).toMatch(/the key "pro\\u001bviders" has control characters/);
    const env = refusal('{}', { REDIS_URL: 'redis://127.0.0.1:6379\u0007' });
    expect(env.path).toBe('redis.url');
    expect(env.message).toMatch(/^REDIS_URL \(redis\.url\): must not contain spaces or control characters/);
    expect(refusal('{}', { REDIS_URL: 'http://127.0.0.1:6379' }).message).toMatch(/redis:\/\/ or rediss:\/\//);
    expect(() => parseConfig({ redis: { url: 'redis://127.0.0.1:6379' }, sandbox: { smtpHost: '\ud800' } })).toThrow(
      /sandbox\.smtpHost: is not valid Unicode/,
    );
  });

  it('refuses 5,000 nested brackets, blocks or objects with one message naming the line, never a stack overflow', () => {
    const flow = refusal(`a:\n  b: ${'['.repeat(5000)}${']'.repeat(5000)}\n`);
    expect(flow.message).toMatch(new RegExp(`nests deeper than ${MAX_CONFIG_DEPTH} levels at line 2, column \\d+`));
    const json = refusal(`{"a": ${'{"b": '.repeat(5000)}1${'}'.repeat(5001)}`);
    expect(json.message).toMatch(/nests deeper than 32 levels at line 1/);
    expect(refusal(`${'- '.repeat(5000)}x\n`).message).toMatch(/nests deeper/);
    const deep = JSON.parse(`{"a": ${'['.repeat(100_000)}${']'.repeat(100_000)}}`) as unknown;
    expect(() => parseConfig(deep)).toThrow(/a\.0\.0\.0.*nests deeper than 32 levels/);
    // A real config is far shallower.
    expect(() => parseConfig({ governor: { rules: [] } })).not.toThrow();
  });

  it('shows an empty or odd key in the path quoted, so the message still says where', () => {
    expect(() => parseConfig({ '': 1 })).toThrow(/^invalid config: "": unknown key$/);
    expect(() => parseConfig({ providers: { 'a.b': { kind: 'ses', sandbox: true, rate: 1 } } })).toThrow(
      /providers\."a\.b":/,
    );
  });

  it('names the line and column of a syntax error, a duplicate key or an unknown tag', () => {
    expect(refusal('a: [1, 2\n').message).toMatch(/is not valid YAML at line \d+, column \d+/);
    expect(refusal('redis: {}\nredis: {}\n').message).toMatch(/at line 2, column 1: Map keys must be unique/);
    expect(refusal('jitterSlackMs: !weird 5\n').message).toMatch(/at line 1, column 16: Unresolved tag/);
  });
});

describe('admin tokens', () => {
  const TOKEN = 'a-token-of-at-least-thirty-two-characters-0001';
  const weak = (token: string) => () =>
    parseConfig({
      admin: {
        tokens: [
          { actor: 'ops', token: TOKEN },
          { actor: 'dev', token },
        ],
      },
    });

  it('refuses 32 identical characters, and other tokens without real entropy, naming the path and never the token', () => {
    const same = 'x'.repeat(32);
    for (const [token, why] of [
      [same, /has 1 distinct characters, needs at least 16/],
      ['abababababababababababababababab', /distinct characters/],
      ['0123456789abcdef0123456789abcdef', /repeats a shorter token|bits/],
      ['abcdefghijklmnopqrstuvwxyz0123456789', /mostly runs/],
      ['0123456789abcdef'.split('').reverse().join('') + 'fedcba9876543210', /bits|runs|repeats/],
    ] as const) {
      let err: unknown;
      try {
        weak(token)();
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(SluiceError);
      expect((err as SluiceError).path).toBe('admin.tokens.1.token');
      expect((err as SluiceError).message).toMatch(why);
      expect((err as SluiceError).message).not.toContain(token);
    }
    expect(() => weak('dGhpcyBpcyBhIHJlYWwgdG9rZW4gb2YgMzIgYnl0ZXM=')()).not.toThrow();
  });

  it('refuses a weak token from SLUICE_ADMIN_TOKENS, naming the actor and not the token', () => {
    const same = 'Q'.repeat(40);
    const err = refusal('{}', { SLUICE_ADMIN_TOKENS: `alice:${TOKEN},bob:${same}` });
    expect(err.path).toBe('admin.tokens');
    expect(err.message).toMatch(/^SLUICE_ADMIN_TOKENS: the token of bob has 1 distinct characters/);
    expect(err.message).not.toContain(same);
    expect(refusal('{}', { SLUICE_ADMIN_TOKENS: `__proto__:${TOKEN}` }).message).toMatch(/pair 1 must be actor:token/);
  });
});
