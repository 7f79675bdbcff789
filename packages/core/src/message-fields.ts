import { z } from 'zod';

// The checks a message's strings and template data need beyond their types: what a header,
// an ESP's JSON or a Redis key would otherwise carry (or silently change) on the way out.

/** The most `text` and `html` may hold together, and `raw` alone: UTF-8 bytes. */
export const MAX_BODY_BYTES = 10_000_000;
/** The most `template.data` may hold, as JSON in UTF-8 bytes. */
export const MAX_TEMPLATE_DATA_BYTES = 262_144;
/** How deep `template.data` may nest (objects and arrays). */
export const MAX_TEMPLATE_DATA_DEPTH = 32;
/** The most headers one message may set. */
export const MAX_HEADERS = 100;
/** The most tags one message may carry (Sluice adds its own ids beside them at the ESP). */
export const MAX_TAGS = 32;

/**
 * Keys refused in headers, tags, template data and the message itself: an object built from
 * them would lose `__proto__` (it sets the prototype instead) and carry the others as if
 * they were its own, so what arrives would not be what was sent.
 */
export const PROTOTYPE_KEYS: ReadonlySet<string> = new Set(['__proto__', 'constructor', 'prototype']);

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
/**
 * Control characters a one-line field may not hold: C0 but TAB, DEL, C1 (U+0085 among them)
 * and the Unicode line and paragraph separators, which some mail readers and JSON parsers
 * break lines at.
 */
const LINE_CONTROL = /[\u0000-\u0008\u000A-\u001F\u007F-\u009F\u2028\u2029]/;

const codePoint = (c: string): string => `U+${c.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}`;

/** Why a string cannot be carried as UTF-8 text, or undefined. */
function unicodeProblem(value: string): string | undefined {
  const m = LONE_SURROGATE.exec(value);
  if (m) return `must be well-formed Unicode: a lone surrogate ${codePoint(m[0])} at character ${m.index}`;
  return undefined;
}

/** Why a one-line field (a subject, a display name, a header value, a key) is refused, or undefined. */
export function lineProblem(value: string): string | undefined {
  if (/[\r\n]/.test(value)) return 'must not contain CR or LF';
  const m = LINE_CONTROL.exec(value);
  if (m) return `must not contain control characters: ${codePoint(m[0])} at character ${m.index}`;
  return unicodeProblem(value);
}

/** Why a body (`text`, `html`, `raw`) is refused, or undefined: NUL and lone surrogates. */
export function bodyProblem(value: string): string | undefined {
  const nul = value.indexOf('\u0000');
  if (nul >= 0) return `must not contain NUL (U+0000): at character ${nul}`;
  return unicodeProblem(value);
}

/** UTF-8 bytes of a string. */
export const utf8Bytes = (value: string): number => Buffer.byteLength(value, 'utf8');

/** Adds `problem` as an issue when the check finds one: the way the schema uses the checks above. */
export function refineWith(check: (value: string) => string | undefined) {
  return (value: string, ctx: z.RefinementCtx): void => {
    const problem = check(value);
    if (problem !== undefined) ctx.addIssue({ code: 'custom', message: problem });
  };
}

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

class DataProblem extends Error {
  constructor(
    readonly at: PropertyKey[],
    message: string,
  ) {
    super(message);
  }
}

/** What `typeof` calls a value, in words a backend developer reads. */
function kindOf(value: unknown): string {
  if (typeof value === 'bigint') return 'a BigInt';
  if (typeof value === 'function') return 'a function';
  if (typeof value === 'symbol') return 'a symbol';
  if (value === undefined) return 'undefined (omit the key or use null)';
  const name = (Object.getPrototypeOf(value) as { constructor?: { name?: unknown } } | null)?.constructor?.name;
  return typeof name === 'string' && name !== '' ? `a ${name}` : 'an object that is not plain data';
}

function isPlainObject(value: object): boolean {
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/**
 * Copies `value` as JSON data, or throws a {@link DataProblem} naming where it is not: only
 * null, booleans, finite numbers, well-formed strings, arrays and plain objects, no cycle,
 * no `toJSON`, at most {@link MAX_TEMPLATE_DATA_DEPTH} deep. The copy is what gets written,
 * so a value changed by the caller after the check (or a getter) cannot slip past it.
 */
function copyJson(value: unknown, at: PropertyKey[], open: Set<object>): Json {
  if (value === null || typeof value === 'boolean') return value;
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new DataProblem(at, `must be JSON data: ${value} is not a finite number`);
    return value;
  }
  if (typeof value === 'string') {
    const problem = unicodeProblem(value);
    if (problem) throw new DataProblem(at, problem);
    return value;
  }
  if (typeof value !== 'object') throw new DataProblem(at, `must be JSON data, not ${kindOf(value)}`);
  if (open.has(value)) throw new DataProblem(at, 'must be JSON data: it refers to itself (a circular reference)');
  if (at.length > MAX_TEMPLATE_DATA_DEPTH)
    throw new DataProblem(at, `must be JSON data nested at most ${MAX_TEMPLATE_DATA_DEPTH} levels deep`);
  const isArray = Array.isArray(value);
  if (!isArray && !isPlainObject(value)) throw new DataProblem(at, `must be JSON data, not ${kindOf(value)}`);
  // Every item takes a byte or more as JSON: a longer array is over the limit (and a sparse
  // one of a billion holes would take forever to copy).
  if (isArray && (value as unknown[]).length > MAX_TEMPLATE_DATA_BYTES)
    throw new DataProblem(at, `must be at most ${MAX_TEMPLATE_DATA_BYTES} bytes as JSON`);
  open.add(value);
  try {
    if (isArray) return Array.from(value as unknown[], (item, i) => copyJson(item, [...at, i], open));
    const out: { [key: string]: Json } = {};
    for (const key of Reflect.ownKeys(value)) {
      if (typeof key === 'symbol') throw new DataProblem(at, 'must be JSON data: it has a symbol key');
      if (!Object.prototype.propertyIsEnumerable.call(value, key)) continue;
      if (PROTOTYPE_KEYS.has(key)) throw new DataProblem([...at, key], 'is a reserved JavaScript name: rename the key');
      if (key === 'toJSON')
        throw new DataProblem([...at, key], 'must be JSON data: toJSON is not (pass the data itself)');
      const problem = unicodeProblem(key);
      if (problem) throw new DataProblem([...at, key], `key ${problem}`);
      Object.defineProperty(out, key, {
        value: copyJson((value as Record<string, unknown>)[key], [...at, key], open),
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
    return out;
  } finally {
    open.delete(value);
  }
}

/**
 * The schema of `template.data`: a plain object of JSON data, at most
 * {@link MAX_TEMPLATE_DATA_BYTES} bytes as JSON. Its output is a copy of the data.
 */
export const templateDataSchema = z.unknown().transform((value, ctx): Record<string, Json> => {
  if (value === undefined) return {};
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    ctx.addIssue({ code: 'custom', message: 'must be an object of template variables' });
    return z.NEVER;
  }
  let copy: Json;
  try {
    copy = copyJson(value, [], new Set());
  } catch (error) {
    // A getter or a proxy that throws is the caller's data failing to be read: say so, where.
    const problem =
      error instanceof DataProblem
        ? error
        : new DataProblem([], `could not be read: ${error instanceof Error ? error.message : String(error)}`);
    ctx.addIssue({ code: 'custom', path: problem.at, message: problem.message });
    return z.NEVER;
  }
  const bytes = utf8Bytes(JSON.stringify(copy));
  if (bytes > MAX_TEMPLATE_DATA_BYTES) {
    ctx.addIssue({
      code: 'custom',
      message: `must be at most ${MAX_TEMPLATE_DATA_BYTES} bytes as JSON (is ${bytes}): pass ids, not documents`,
    });
    return z.NEVER;
  }
  return copy as Record<string, Json>;
});

/**
 * Checks what zod's records cannot see: the own keys of an object given for `headers` or
 * `tags` (zod skips `__proto__` without a word) and their count, before each is parsed.
 */
export function keyedRecord<S extends z.ZodType>(record: S, what: string, max: number) {
  return z
    .unknown()
    .superRefine((value, ctx) => {
      if (typeof value !== 'object' || value === null) return;
      const keys = Reflect.ownKeys(value);
      const reserved = keys.find((k) => typeof k === 'string' && PROTOTYPE_KEYS.has(k));
      if (reserved !== undefined) {
        ctx.addIssue({ code: 'custom', path: [reserved], message: 'is a reserved JavaScript name and cannot be used' });
      } else if (keys.length > max) {
        ctx.addIssue({ code: 'custom', message: `may hold at most ${max} ${what} (has ${keys.length})` });
      }
    })
    .pipe(record);
}
