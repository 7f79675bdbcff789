import fc from 'fast-check';
import { expect, it } from 'vitest';
import { SluiceError, createKeys, parseConfig, type MessageInput } from '@sluice/core';
import { createClient, type SluiceClient } from '@sluice/client';
import { cancelCampaign } from '@sluice/ops';
import { faultsSeed, reportFaults } from '../support/faults-report.js';
import { useRedisPrefix } from '../support/redis-prefix.js';

// `send` and `sendBulk` under arbitrary input, valid and broken in every field. Every call
// either succeeds, and each message it accepted can be read back, or throws a SluiceError
// whose `path` names a field; a refused call changes no key (every key's DUMP compared).

const r = useRedisPrefix();

const FIELDS = new Set([
  'from',
  'to',
  'replyTo',
  'subject',
  'text',
  'html',
  'template',
  'raw',
  'priority',
  'stream',
  'campaignId',
  'tenantId',
  'idempotencyKey',
  'expiresAt',
  'headers',
  'tags',
]);
/** Calls per prefix: each prefix starts with a campaign, a cancelled one, and a queue's meta. */
const CASES_PER_PREFIX = 10;
const TIME_LIMIT_MS = 25_000;

// Large inputs are made once and shared: generating them per case would take the whole budget.
const BIG = {
  text: 'é'.repeat(3_500_000) + '€'.repeat(1_166_667), // 10.5 MB of UTF-8 in 4.7 M characters
  raw: 'Subject: x\r\n\r\n' + 'x'.repeat(10_000_001),
  data: { blob: 'x'.repeat(300_000) },
  headers: Object.fromEntries(Array.from({ length: 20_000 }, (_, i) => [`X-H${i}`, 'v'])),
  tags: Object.fromEntries(Array.from({ length: 20_000 }, (_, i) => [`t${i}`, 'v'])),
};
const CONTROLS = ['\u0000', '\u0007', '\u001b', '\u007f', '\u0085', '\u2028', '\u2029', '\r', '\n', '\t'];
const SURROGATES = ['\ud800', '\udbff', '\udc00', '\udfff'];

const small = fc.string({ maxLength: 24 });
/** A string with a control character or a lone surrogate inside. */
const nasty = fc.tuple(small, fc.constantFrom(...CONTROLS, ...SURROGATES), small).map(([a, c, b]) => `${a}${c}${b}`);
const anyString = fc.oneof(
  { weight: 3, arbitrary: small },
  { weight: 3, arbitrary: nasty },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 24 }) },
  { weight: 1, arbitrary: fc.constantFrom('', ' ', '\t \u00a0') },
);
const oddType = fc.oneof(
  fc.integer(),
  fc.double(),
  fc.bigInt(),
  fc.boolean(),
  fc.constant(null),
  fc.array(small, { maxLength: 2 }),
  fc.dictionary(small, small, { maxKeys: 2 }),
  fc.constant(new Date(0)),
);
/** Mostly `valid`, else broken strings and odd types. */
const field = <T>(valid: fc.Arbitrary<T>, weight = 6) =>
  fc.oneof({ weight, arbitrary: valid }, { weight: 1, arbitrary: anyString }, { weight: 1, arbitrary: oddType });
const maybe = <T>(arb: fc.Arbitrary<T>, absent = 3) =>
  fc.oneof({ weight: absent, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: arb });

/** An object with one of the prototype keys as its own (as JSON.parse makes it). */
const prototypeKeyed = fc
  .tuple(fc.constantFrom('__proto__', 'constructor', 'prototype'), fc.constantFrom('"x"', '{"a":1}'))
  .map(([key, value]) => JSON.parse(`{"ok":"1","${key}":${value}}`) as unknown);

const brokenData = fc.oneof(
  fc.bigInt().map((n) => ({ n })),
  fc.constant(null).map(() => {
    const c: Record<string, unknown> = { a: 1 };
    c.self = { c };
    return c;
  }),
  fc.constant(null).map(() => ({
    x: {
      toJSON() {
        throw new Error('toJSON failed');
      },
    },
  })),
  fc.constant(null).map(() => ({
    get x(): never {
      throw new TypeError('getter failed');
    },
  })),
  fc.constantFrom(
    { d: new Date(0) },
    { m: new Map([[1, 2]]) },
    { u: undefined },
    { f: Number.NaN },
    { i: Number.POSITIVE_INFINITY },
    { s: 'a\ud800' },
    BIG.data,
    [1, 2],
  ),
  fc
    .integer({ min: 30, max: 200 })
    .map((depth) => ({ deep: JSON.parse('['.repeat(depth) + ']'.repeat(depth)) as unknown })),
  prototypeKeyed,
);
const templateData = fc.oneof(
  { weight: 3, arbitrary: fc.dictionary(small, fc.jsonValue({ maxDepth: 3 }), { maxKeys: 5 }) },
  { weight: 3, arbitrary: brokenData },
);

const headerName = fc.oneof(
  { weight: 4, arbitrary: fc.stringMatching(/^X-[A-Za-z0-9-]{1,12}$/) },
  { weight: 1, arbitrary: fc.constantFrom('Message-ID', 'Bcc', 'bad name', 'X:Y', '') },
);
const headers = fc.oneof(
  { weight: 4, arbitrary: fc.dictionary(headerName, field(fc.stringMatching(/^[ -~]{0,40}$/)), { maxKeys: 4 }) },
  { weight: 1, arbitrary: prototypeKeyed },
  { weight: 1, arbitrary: fc.constant(BIG.headers) },
  { weight: 1, arbitrary: oddType },
);
const tags = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.dictionary(
      fc.oneof(fc.stringMatching(/^[a-z_]{1,10}$/), anyString),
      field(fc.stringMatching(/^[A-Za-z0-9_.@-]{0,20}$/)),
      { maxKeys: 4 },
    ),
  },
  { weight: 1, arbitrary: prototypeKeyed },
  { weight: 1, arbitrary: fc.constant(BIG.tags) },
);

const address = fc.constantFrom('someone@example.test', 'Jane.Doe+x@mail.example.test', 'x@y.test');
const broken = fc.oneof({ weight: 3, arbitrary: anyString }, { weight: 1, arbitrary: oddType });

/** A message Sluice should take: every field valid, the optional ones present or not. */
const valid = fc
  .record({
    from: fc.constantFrom(
      'Acme <hello@acme.test>',
      'hello@acme.test',
      '"Acme, Inc" <a@acme.test>',
      'Grüße <g@acme.test>',
    ),
    to: address,
    replyTo: maybe(address),
    subject: fc.constantFrom('Hi', 'Your code', 'Ünïcödé ✓'),
    body: fc.oneof(
      fc.record({ text: fc.constantFrom('Hello', 'Grüße 👋', 'line one\r\nline two') }),
      fc.record({ text: fc.constant('Hello'), html: fc.constant('<p>Hello</p>') }),
      fc.record({ html: fc.constant('<p>Hello</p>') }),
      fc.record({
        template: fc.record({
          name: fc.constant('welcome'),
          data: fc.dictionary(fc.stringMatching(/^[a-z]{1,8}$/), fc.jsonValue({ maxDepth: 3 }), { maxKeys: 4 }),
        }),
      }),
    ),
    priority: maybe(fc.constantFrom('critical', 'high', 'normal', 'low')),
    stream: maybe(fc.constantFrom('transactional', 'marketing')),
    campaignId: maybe(fc.constant('spring')),
    tenantId: maybe(fc.constantFrom('default', 'acme')),
    idempotencyKey: maybe(fc.constantFrom('order-1', 'order-2', 'signin-7f3a', 'Bestellung-ü')),
    expiresAt: maybe(fc.constantFrom(Date.now() + 3_600_000, '2031-01-01T00:00:00Z')),
    headers: maybe(
      fc.dictionary(fc.stringMatching(/^X-[A-Za-z0-9-]{1,12}$/), fc.stringMatching(/^[ -~]{0,40}$/), { maxKeys: 4 }),
    ),
    tags: maybe(
      fc.dictionary(fc.stringMatching(/^[a-z_]{1,10}$/), fc.stringMatching(/^[A-Za-z0-9_.@-]{0,20}$/), { maxKeys: 4 }),
    ),
  })
  .map(({ body: b, ...fields }) => {
    const out: Record<string, unknown> = {};
    for (const [key, value] of Object.entries({ ...fields, ...b })) if (value !== undefined) out[key] = value;
    return out;
  });

/** One field broken (or, for `extra`, a field that does not exist): [field, value]. */
const fault: fc.Arbitrary<[string, unknown]> = fc.oneof(
  fc.tuple(fc.constantFrom('from', 'to', 'replyTo', 'subject', 'stream', 'tenantId', 'idempotencyKey'), broken),
  fc.tuple(
    fc.constant('from'),
    anyString.map((name) => `${name} <hello@acme.test>`),
  ),
  fc.tuple(fc.constantFrom('text', 'html'), fc.oneof(broken, fc.constantFrom(BIG.text, 'a\u0000b', ''))),
  fc.tuple(fc.constant('raw'), fc.oneof(broken, fc.constantFrom(BIG.raw, 'Subject: Hi\r\n\r\nHello'))),
  fc.tuple(fc.constant('template'), fc.record({ name: field(fc.constant('welcome')), data: templateData })),
  fc.tuple(fc.constant('template'), broken),
  fc.tuple(fc.constant('priority'), fc.oneof(broken, fc.constant('urgent'))),
  fc.tuple(fc.constant('campaignId'), fc.oneof(broken, fc.constantFrom('recalled', 'nope', 'bad id'))),
  fc.tuple(fc.constant('expiresAt'), fc.oneof(broken, fc.integer(), fc.double(), fc.constant('tomorrow'))),
  fc.tuple(fc.constant('headers'), headers),
  fc.tuple(fc.constant('tags'), tags),
  fc.tuple(fc.constantFrom('cc', 'bcc', 'attachments'), broken),
  fc.tuple(fc.constant('__proto__'), fc.constant({ priority: 'critical' })),
);

/** A valid message with none, one or a few faults. */
const message = fc
  .tuple(
    valid,
    fc.oneof(
      { weight: 2, arbitrary: fc.constant([]) },
      { weight: 5, arbitrary: fc.array(fault, { minLength: 1, maxLength: 3 }) },
    ),
  )
  .map(([m, faults]) => {
    const out: Record<string, unknown> = { ...m };
    for (const [key, value] of faults) {
      // As JSON.parse makes it: an own property, whatever its name.
      Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
    }
    return out;
  });
const input = fc.oneof({ weight: 20, arbitrary: message }, { weight: 1, arbitrary: oddType });

type Call = { bulk: false; input: unknown } | { bulk: true; inputs: unknown };
const call: fc.Arbitrary<Call> = fc.oneof(
  { weight: 3, arbitrary: input.map((i): Call => ({ bulk: false, input: i })) },
  {
    weight: 2,
    arbitrary: fc.array(input, { minLength: 1, maxLength: 6 }).map((inputs): Call => ({ bulk: true, inputs })),
  },
  {
    // A batch of good messages with one bad item somewhere.
    weight: 1,
    arbitrary: fc.tuple(fc.integer({ min: 1, max: 6 }), fc.nat(), input).map(([n, at, bad]): Call => {
      const good = { from: 'a@acme.test', to: 'b@example.test', subject: 'Hi', text: 'Hello' };
      const inputs: unknown[] = Array.from({ length: n }, () => ({ ...good }));
      inputs.splice(at % (n + 1), 0, bad);
      return { bulk: true, inputs };
    }),
  },
  { weight: 1, arbitrary: oddType.map((inputs): Call => ({ bulk: true, inputs })) },
);

/** Every key under `prefix` and its exact value (the DUMPs sent together: one round trip). */
async function keyspace(prefix: string): Promise<Map<string, string>> {
  const keys: string[] = [];
  let cursor = '0';
  do {
    const [next, found] = await r.redis.scan(cursor, 'MATCH', `*${prefix}*`, 'COUNT', 1000);
    cursor = next;
    keys.push(...found);
  } while (cursor !== '0');
  keys.sort();
  const values = await Promise.all(keys.map((key) => r.redis.dumpBuffer(key)));
  return new Map(keys.map((key, i) => [key, values[i]?.toString('hex') ?? '(gone)']));
}

/** Whether a refusal's path names a field of what was sent (`messages.<i>.` first in a bulk). */
function namesAField(path: string | undefined, c: Call): boolean {
  if (path === undefined || path === '') return false;
  let parts = path.split('.');
  let sent: unknown = c.bulk ? undefined : c.input;
  if (c.bulk) {
    if (path === 'messages') return true;
    const i = Number(parts[1]);
    if (parts[0] !== 'messages' || !Array.isArray(c.inputs) || !(i >= 0 && i < c.inputs.length)) return false;
    sent = (c.inputs as unknown[])[i];
    parts = parts.slice(2);
    if (parts.length === 0) return true;
  }
  const top = parts[0]!;
  if (top === '(root)') return parts.length === 1;
  const own = typeof sent === 'object' && sent !== null && Object.prototype.hasOwnProperty.call(sent, top);
  return FIELDS.has(top) || own;
}

/** A fresh prefix with what a live one has: a campaign, a cancelled campaign, an intake queue. */
async function seed(prefix: string): Promise<SluiceClient> {
  const client = createClient({ redis: r.redis, prefix, fleetCheck: 'off' });
  await client.campaigns.create({ id: 'spring', priority: 'low' });
  await client.campaigns.create({ id: 'recalled' });
  const deps = { redis: r.redis, keys: createKeys(prefix), config: parseConfig({}) };
  await cancelCampaign(deps, 'recalled', { actor: 'fuzz', reason: 'recalled', waitMs: 0 });
  await client.send({ from: 'a@acme.test', to: 'b@example.test', subject: 'Hi', text: 'Hello' });
  return client;
}

it('send and sendBulk: every refusal a SluiceError naming the field, nothing written by one, every acceptance readable', async () => {
  const seed0 = faultsSeed('fuzz-send');
  let fuzzCases = 0;
  let nonSluiceErrors = 0;
  let accepted = 0;
  let refused = 0;
  const problems: string[] = [];
  let client: SluiceClient | undefined;
  let prefix = '';
  // The budget is checked before each case, never by interrupting one: fast-check's
  // `interruptAfterTimeLimit` abandons the running case, which then goes on writing to Redis
  // after the test (and its connection) have closed.
  const deadline = Date.now() + TIME_LIMIT_MS;
  try {
    await fc.assert(
      fc.asyncProperty(call, async (c) => {
        if (Date.now() >= deadline) return;
        if (fuzzCases % CASES_PER_PREFIX === 0) {
          await client?.close();
          client = undefined;
          prefix = `${r.prefix}c${fuzzCases}x`;
          client = await seed(prefix);
        }
        fuzzCases++;
        const before = await keyspace(prefix);
        let results: { id: string }[] | undefined;
        let error: unknown;
        try {
          results = c.bulk
            ? await client!.sendBulk(c.inputs as MessageInput[])
            : [await client!.send(c.input as MessageInput)];
        } catch (e) {
          error = e;
        }
        if (results) {
          accepted++;
          for (const { id } of results) {
            if ((await client!.messages.status(id)) === null) problems.push(`accepted ${id} has no record`);
          }
          return;
        }
        refused++;
        if (!(error instanceof SluiceError) || !namesAField(error.path, c)) {
          nonSluiceErrors++;
          const e = error as { name?: string; code?: string; path?: string; message?: string };
          problems.push(`${e?.name} ${e?.code ?? ''} path=${e?.path} ${String(e?.message).slice(0, 200)}`);
        }
        const after = await keyspace(prefix);
        expect([...after.keys()], `a refused call (${(error as Error)?.message?.slice(0, 200)}) wrote keys`).toEqual([
          ...before.keys(),
        ]);
        for (const [key, value] of before) {
          expect(after.get(key), `a refused call changed ${key}`).toBe(value);
        }
      }),
      { seed: seed0, numRuns: 5_000 },
    );
  } finally {
    await client?.close();
    reportFaults('fuzz-send', { fuzzCases, nonSluiceErrors, accepted, refused });
  }
  expect(problems.slice(0, 10)).toEqual([]);
  expect(nonSluiceErrors).toBe(0);
  // Both sides were reached: not a fuzzer that only ever hears "invalid".
  expect(accepted).toBeGreaterThan(10);
  expect(refused).toBeGreaterThan(10);
});
