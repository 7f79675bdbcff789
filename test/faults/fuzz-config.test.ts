import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, expect, it } from 'vitest';
import { SluiceError, loadConfig, parseConfig } from '@sluice/core';
import { faultsSeed, reportFaults } from '../support/faults-report.js';

// The config loader under arbitrary documents (issue 12): YAML and JSON text, deep nesting,
// odd keys (`__proto__`, control characters), wrong types, and environment overrides. The
// loader either returns a config or throws one `SluiceError('invalid_config')` whose message
// is one line and names a field path, a line and column, or the environment variable; never
// a raw TypeError or RangeError, and nothing else.

const dir = mkdtempSync(join(tmpdir(), 'sluice-fuzz-config-'));
const file = join(dir, 'sluice.yaml');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const ODD_KEYS = [
  '__proto__',
  'constructor',
  'prototype',
  'toString',
  'hasOwnProperty',
  '',
  ' ',
  'a\u0000b',
  'é',
  '\u2028',
];
const ODD_STRINGS = [
  '',
  ' ',
  '\u0000',
  'redis://127.0.0.1:6379\u0000',
  'http://a\tb',
  '\ud800',
  '\u001b[31m',
  'x'.repeat(70),
  'constructor',
  '__proto__',
  '1e20',
  'redis://127.0.0.1:6379',
  'ses',
];

/** Any JSON-ish value, with the keys and strings that have broken loaders before. */
const oddValue: fc.Arbitrary<unknown> = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constantFrom(...ODD_STRINGS),
    fc.string({ unit: 'binary', maxLength: 12 }),
    fc.oneof(fc.integer(), fc.double(), fc.constant(1e20), fc.constant(-1), fc.constant(0)),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(fc.oneof(fc.constantFrom(...ODD_KEYS), fc.string({ maxLength: 8 })), tie('value'), {
      maxKeys: 4,
    }),
  ),
})).value;

/** A config that loads, to mutate: every part the schema has. */
const VALID = {
  redis: { url: 'redis://127.0.0.1:6379', prefix: 'fz' },
  defaultProvider: 'ses',
  providers: {
    ses: { kind: 'ses', sandbox: true, rate: 10 },
    sg: { kind: 'sendgrid', rate: 5, endpoint: 'http://127.0.0.1:4566' },
    mg: { kind: 'mailgun', sandbox: true, rate: 5, domain: 'mg.example.com' },
    relay: { kind: 'smtp', rate: 5, host: 'smtp.example.com' },
  },
  pools: { default: { state: 'active' } },
  routes: { marketing: [{ provider: 'sg', weight: 2 }, { provider: 'mg' }] },
  receivers: [{ name: 'google', domains: ['gmail.com'], rate: 20 }],
  admin: { tokens: [{ actor: 'ops', token: 'dGhpcyBpcyBhIHJlYWwgdG9rZW4gb2YgMzIgYnl0ZXM=' }] },
  api: { webhooks: { ses: { topicArns: ['arn:aws:sns:us-east-1:123456789012:t'] } } },
  delivery: {},
  governor: {},
};

/** Every path into `VALID` (objects and arrays), to set a field to an odd value. */
function paths(value: unknown, at: (string | number)[] = []): (string | number)[][] {
  if (typeof value !== 'object' || value === null) return [at];
  const out: (string | number)[][] = [at];
  for (const [k, v] of Object.entries(value)) out.push(...paths(v, [...at, Array.isArray(value) ? Number(k) : k]));
  return out;
}
const VALID_PATHS = paths(VALID).filter((p) => p.length > 0);

function mutated(path: (string | number)[], value: unknown, key: string | undefined): unknown {
  const copy = structuredClone(VALID) as Record<string, unknown>;
  let node: Record<string | number, unknown> = copy;
  for (const part of path.slice(0, -1)) node = node[part] as Record<string | number, unknown>;
  const last = path[path.length - 1]!;
  if (key === undefined) node[last] = value;
  // Beside the field, under an odd key (JSON.parse would make `__proto__` an own key too).
  else Object.defineProperty(node, key, { value, enumerable: true, configurable: true, writable: true });
  return copy;
}

/** Text that nests `depth` deep in one of the ways YAML and JSON nest. */
const nested = fc
  .record({ depth: fc.integer({ min: 1, max: 6000 }), style: fc.constantFrom('flow', 'map', 'json', 'block', 'mixed') })
  .map(({ depth, style }) => {
    if (style === 'flow') return `a: ${'['.repeat(depth)}${']'.repeat(depth)}\n`;
    if (style === 'map') return `a: ${'{b: '.repeat(depth)}1${'}'.repeat(depth)}\n`;
    if (style === 'json') return `{"a": ${'{"b": '.repeat(depth)}1${'}'.repeat(depth + 1)}`;
    if (style === 'block') return `${'- '.repeat(depth)}x\n`;
    return `x: ${'[{a: '.repeat(depth)}`;
  });

/** YAML-ish soup: the tokens parsers choke on, in any order. */
const soup = fc
  .array(
    fc.constantFrom(
      '[',
      ']',
      '{',
      '}',
      ':',
      ': ',
      '- ',
      '? ',
      ',',
      '&a ',
      '*a',
      '!!str ',
      '!x ',
      '"',
      "'",
      '#',
      '\n',
      '  ',
      '\t',
      '\u0000',
      '\ufeff',
      '---\n',
      '...\n',
      '%YAML 1.1\n',
      'providers',
      'redis',
      'url',
      '__proto__',
      '<<: *a',
      '|',
      '>',
      '1e20',
    ),
    { maxLength: 40 },
  )
  .map((parts) => parts.join(''));

type Case = { kind: 'text'; text: string; env: NodeJS.ProcessEnv } | { kind: 'object'; value: unknown };

const ENV = fc.record(
  {
    REDIS_URL: fc.constantFrom('redis://127.0.0.1:6379', 'redis://a\u0001b', 'http://x', ' ', '\ud800'),
    SLUICE_SANDBOX_URL: fc.constantFrom('http://127.0.0.1:4566', 'not a url', 'http://a\tb'),
    SLUICE_SANDBOX_SMTP: fc.constantFrom('sandbox:2525', 'sandbox', 'a\u0002:25', ':99999'),
    SLUICE_ADMIN_TOKENS: fc.constantFrom(
      `ops:${'x'.repeat(32)}`,
      'ops:dGhpcyBpcyBhIHJlYWwgdG9rZW4gb2YgMzIgYnl0ZXM=',
      '__proto__:dGhpcyBpcyBhIHJlYWwgdG9rZW4gb2YgMzIgYnl0ZXM=',
      ':',
      ',',
    ),
    SLUICE_ADMIN_PORT: fc.constantFrom('8090', '-1', 'x', '1e3'),
  },
  { requiredKeys: [] },
);

const CASE: fc.Arbitrary<Case> = fc.oneof(
  fc.record({ kind: fc.constant('text' as const), text: nested, env: fc.constant({}) }),
  fc.record({ kind: fc.constant('text' as const), text: soup, env: ENV }),
  fc.record({
    kind: fc.constant('text' as const),
    text: fc
      .tuple(fc.constantFrom(...VALID_PATHS), oddValue, fc.option(fc.constantFrom(...ODD_KEYS)))
      .chain(([path, value, key]) =>
        fc
          .constantFrom('json', 'yaml')
          .map((format) => (format === 'json' ? JSON.stringify : yamlOf)(mutated(path, value, key ?? undefined))),
      ),
    env: ENV,
  }),
  fc.record({ kind: fc.constant('text' as const), text: oddValue.map((v) => JSON.stringify(v) ?? ''), env: ENV }),
  fc.record({
    kind: fc.constant('object' as const),
    value: fc
      .tuple(fc.constantFrom(...VALID_PATHS), oddValue, fc.option(fc.constantFrom(...ODD_KEYS)))
      .map(([path, value, key]) => mutated(path, value, key ?? undefined)),
  }),
);

/** YAML of a value by hand (flow style, every string double-quoted with JSON escapes). */
function yamlOf(value: unknown): string {
  return `# fuzzed\n${JSON.stringify(value, null, 1) ?? 'null'}\n`;
}

/** What counts as the refusal the loader promises. */
function wellFormed(err: unknown): boolean {
  if (!(err instanceof SluiceError) || err.code !== 'invalid_config') return false;
  if (err.message.includes('\n') || err.message.length > 1000) return false;
  return (
    (err.path !== undefined && err.path !== '') ||
    /line \d+, column \d+/.test(err.message) ||
    /^(REDIS_URL|SLUICE_[A-Z_]+) /.test(err.message) ||
    /SLUICE_[A-Z_]+:/.test(err.message)
  );
}

it('every config document loads or is refused as one invalid_config naming where', () => {
  const seed = faultsSeed('fuzz-config');
  let fuzzCases = 0;
  let nonSluiceErrors = 0;
  let refused = 0;
  const odd: string[] = [];
  const run = (c: Case): boolean => {
    fuzzCases++;
    try {
      if (c.kind === 'text') {
        writeFileSync(file, c.text);
        loadConfig({ path: file, env: c.env });
      } else {
        parseConfig(c.value);
      }
      return true;
    } catch (err) {
      refused++;
      if (wellFormed(err)) return true;
      nonSluiceErrors++;
      if (odd.length < 5) odd.push(`${(err as Error).name}: ${String((err as Error).message).slice(0, 200)}`);
      return false;
    }
  };
  let failure: unknown;
  try {
    fc.assert(fc.property(CASE, run), { seed, numRuns: 1200 });
  } catch (err) {
    failure = err;
  }
  reportFaults('fuzz-config', { fuzzCases, nonSluiceErrors, refused });
  expect(odd).toEqual([]);
  expect(failure).toBeUndefined();
  expect(nonSluiceErrors).toBe(0);
});
