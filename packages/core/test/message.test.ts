import { describe, expect, it } from 'vitest';
import { parseMessage, type MessageInput } from '@sluice/core';

const ok = { from: 'Acme <hello@acme.test>', to: 'someone@example.test', subject: 'Hi', text: 'Hello' };
const tpl = (data: unknown): unknown => ({ from: ok.from, to: ok.to, template: { name: 'welcome', data } });

/** The error parseMessage throws for `input`, or a failure naming what it accepted. */
function refusal(input: unknown, prefix: PropertyKey[] = []): { code: string; path: string; message: string } {
  try {
    parseMessage(input, prefix);
  } catch (error) {
    return error as { code: string; path: string; message: string };
  }
  throw new Error('accepted');
}

describe('template.data must be JSON data, and small', () => {
  const circular: Record<string, unknown> = { a: 1 };
  circular.self = circular;
  const cases: [string, unknown, string, RegExp][] = [
    ['a BigInt', { n: 10n }, 'template.data.n', /not a BigInt/],
    ['a circular object', { user: circular }, 'template.data.user.self', /refers to itself/],
    [
      'a throwing toJSON',
      {
        x: {
          toJSON: () => {
            throw new Error('no');
          },
        },
      },
      'template.data.x.toJSON',
      /toJSON/,
    ],
    ['a Date', { when: new Date(0) }, 'template.data.when', /not a Date/],
    ['a Map', { m: new Map() }, 'template.data.m', /not a Map/],
    ['a function', { f: () => 1 }, 'template.data.f', /not a function/],
    ['undefined', { u: undefined }, 'template.data.u', /undefined/],
    ['NaN', { list: [1, Number.NaN] }, 'template.data.list.1', /not a finite number/],
    ['a lone surrogate', { s: 'a\uD800b' }, 'template.data.s', /lone surrogate U\+D800/],
    ['a __proto__ key', JSON.parse('{"a":{"__proto__":{"x":1}}}'), 'template.data.a.__proto__', /reserved/],
    ['an array', [1, 2], 'template.data', /must be an object/],
    ['10 MB', { blob: 'x'.repeat(10_000_000) }, 'template.data', /at most 262144 bytes as JSON/],
    [
      '2,000 nested arrays',
      { deep: JSON.parse('['.repeat(2000) + ']'.repeat(2000)) as unknown },
      'template.data.deep.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0',
      /nested at most 32 levels/,
    ],
    [
      'a getter that throws',
      {
        get x(): never {
          throw new Error('gone');
        },
      },
      'template.data',
      /could not be read: gone/,
    ],
  ];
  for (const [what, data, path, message] of cases) {
    it(`refuses ${what}, naming the field`, () => {
      const error = refusal(tpl(data));
      expect(error).toMatchObject({ name: 'SluiceError', code: 'invalid_message', path });
      expect(error.message).toMatch(message);
    });
  }

  it('takes plain JSON data and keeps a copy of it', () => {
    const data = {
      first: 'Jane',
      items: [{ sku: 'a', qty: 2 }],
      vip: true,
      note: null,
      nested: Object.create(null) as object,
    };
    const m = parseMessage(tpl(data));
    expect(m.template?.data).toEqual(JSON.parse(JSON.stringify(data)));
    data.first = 'changed after';
    expect(m.template?.data).toMatchObject({ first: 'Jane' });
  });

  it('names the item of a bulk', () => {
    expect(refusal(tpl({ n: 1n }), ['messages', 3])).toMatchObject({ path: 'messages.3.template.data.n' });
  });
});

describe('one-line fields refuse control characters and lone surrogates', () => {
  const chars: [string, string][] = [
    ['NUL', '\u0000'],
    ['U+2028', '\u2028'],
    ['U+2029', '\u2029'],
    ['U+0085', '\u0085'],
    ['ESC', '\u001B'],
    ['DEL', '\u007F'],
  ];
  const fields: [string, (bad: string) => MessageInput, string][] = [
    ['the from display name', (bad) => ({ ...ok, from: `Ac${bad}me <hello@acme.test>` }), 'from'],
    ['the subject', (bad) => ({ ...ok, subject: `Hi${bad}` }), 'subject'],
    ['a header value', (bad) => ({ ...ok, headers: { 'X-Order': `4${bad}2` } }), 'headers.X-Order'],
    ['the idempotency key', (bad) => ({ ...ok, idempotencyKey: `k${bad}` }), 'idempotencyKey'],
  ];
  for (const [field, make, path] of fields) {
    for (const [name, bad] of chars) {
      it(`${name} in ${field}`, () => {
        const error = refusal(make(bad));
        expect(error).toMatchObject({ code: 'invalid_message', path });
        expect(error.message).toMatch(/must not contain control characters: U\+/);
      });
    }
    it(`a lone surrogate in ${field}`, () => {
      const error = refusal(make('\uDC00'));
      expect(error).toMatchObject({ code: 'invalid_message', path });
      expect(error.message).toMatch(/well-formed Unicode: a lone surrogate U\+DC00/);
    });
  }

  it('a TAB in a header value and non-ASCII text are fine', () => {
    expect(parseMessage({ ...ok, subject: 'Grüße 👋', headers: { 'X-A': 'a\tb' } }).subject).toBe('Grüße 👋');
  });
});

describe('empty, blank and oversized fields', () => {
  const cases: [string, unknown, string, RegExp][] = [
    ['empty text', { ...ok, text: '' }, 'text', /must not be empty/],
    ['empty html', { ...ok, text: undefined, html: '' }, 'html', /must not be empty/],
    ['a subject of one space', { ...ok, subject: ' ' }, 'subject', /must not be empty or only spaces/],
    ['an idempotency key of one space', { ...ok, idempotencyKey: ' ' }, 'idempotencyKey', /only spaces/],
    ['NUL in the text', { ...ok, text: 'a\u0000b' }, 'text', /NUL/],
    ['a lone surrogate in the html', { ...ok, html: '<p>\uD83D</p>' }, 'html', /lone surrogate/],
    [
      '10.5 MB of UTF-8 in 3.5 M characters',
      { ...ok, text: 'é'.repeat(3_500_000) + '€'.repeat(1_166_667) },
      'text',
      /at most 10000000 bytes \(UTF-8\)/,
    ],
    [
      'text and html of 6 MB each',
      { ...ok, text: 'x'.repeat(6_000_000), html: 'x'.repeat(6_000_000) },
      'html',
      /together must be at most 10000000 bytes/,
    ],
    ['10.5 MB raw MIME', { from: ok.from, to: ok.to, raw: '€'.repeat(3_500_000) }, 'raw', /at most 10000000 bytes/],
    [
      '20,000 headers',
      { ...ok, headers: Object.fromEntries(Array.from({ length: 20_000 }, (_, i) => [`X-H${i}`, 'v'])) },
      'headers',
      /at most 100 headers \(has 20000\)/,
    ],
    [
      '20,000 tags',
      { ...ok, tags: Object.fromEntries(Array.from({ length: 20_000 }, (_, i) => [`t${i}`, 'v'])) },
      'tags',
      /at most 32 tags \(has 20000\)/,
    ],
  ];
  for (const [what, input, path, message] of cases) {
    it(`refuses ${what}`, () => {
      const error = refusal(input);
      expect(error).toMatchObject({ code: 'invalid_message', path });
      expect(error.message).toMatch(message);
    });
  }
});

describe('prototype keys are refused, not dropped', () => {
  for (const key of ['__proto__', 'constructor', 'prototype']) {
    it(`${key} in headers and tags`, () => {
      const headers = JSON.parse(`{"X-A":"1","${key}":"x"}`) as Record<string, string>;
      expect(refusal({ ...ok, headers })).toMatchObject({ code: 'invalid_message', path: `headers.${key}` });
      const tags = JSON.parse(`{"kind":"otp","${key}":"x"}`) as Record<string, string>;
      const error = refusal({ ...ok, tags });
      expect(error).toMatchObject({ code: 'invalid_message', path: `tags.${key}` });
      expect(error.message).toMatch(/reserved JavaScript name/);
    });
  }

  it('__proto__ at the top of a message (as JSON.parse makes it)', () => {
    const input: unknown = JSON.parse(
      `{"__proto__":{"priority":"critical"},"from":"a@acme.test","to":"b@example.test","subject":"s","text":"t"}`,
    );
    expect(refusal(input)).toMatchObject({ code: 'invalid_message', path: '__proto__' });
  });
});

it('a message whose getter throws is refused as invalid, not with the getter’s error', () => {
  const input = {
    ...ok,
    get subject(): string {
      throw new TypeError('nope');
    },
  };
  expect(refusal(input)).toMatchObject({ name: 'SluiceError', code: 'invalid_message', path: '(root)' });
});
