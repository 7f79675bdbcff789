import type * as Yaml from 'yaml';
import type { CST, Document } from 'yaml';
import { SluiceError } from './errors.js';
import { lazy } from './lazy.js';
import { formatPath } from './parse.js';

const yaml = lazy<typeof Yaml>('yaml');

// What the config file may contain before the schema looks at it. The schema checks
// values; these checks are about the document itself, which a schema cannot see: how deep
// it nests (a parser or a validator walking 5,000 brackets deep runs out of stack), keys
// that a JavaScript object cannot hold (`__proto__` vanishes into the prototype), and
// characters that no config value needs (NUL in a URL reaches the socket as it is).

/**
 * The deepest nesting of mappings and sequences a config document may have. The schema's
 * own deepest field is 6 levels down (`governor.rules.0.match.families.0`); a document
 * far deeper is a mistake or an attack, refused before anything walks it.
 */
export const MAX_CONFIG_DEPTH = 32;

/**
 * Keys refused wherever they appear: as a key of a plain object `__proto__` sets the
 * prototype instead of adding an entry (zod's records drop it without a word), and
 * `constructor` and `prototype` read as present on every object (`'constructor' in {}`).
 */
export const RESERVED_KEYS: ReadonlySet<string> = new Set(['__proto__', 'constructor', 'prototype']);

// C0 controls but tab, newline and carriage return (a PEM key spans lines), DEL and C1.
const CONTROL_IN_VALUE = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F]/;
// A key is a name or a receiver bucket: no control character at all, no line breaks.
const CONTROL_IN_KEY = /[\u0000-\u001F\u007F-\u009F\u2028\u2029]/;

const invalid = (source: string, path: string, problem: string): SluiceError =>
  new SluiceError('invalid_config', `invalid ${source}: ${path}: ${problem}`, { path });

/** Renders a path as `parseInput` does: `providers.ses.rate`, `(root)` for the top. */
const pathOf = formatPath;

/** A short, printable rendering of a key for a message (control characters escaped). */
const shown = (key: string): string => JSON.stringify(key.length > 40 ? `${key.slice(0, 40)}…` : key);

/** Whether `s` has a lone surrogate (not valid UTF-16, so not writable as UTF-8). */
function malformedUtf16(s: string): boolean {
  return /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(s);
}

/**
 * Checks a config value as read (from YAML, JSON, or built by a caller) before the schema
 * sees it: nesting at most {@link MAX_CONFIG_DEPTH}, no {@link RESERVED_KEYS}, no control
 * characters in keys or strings, no lone surrogates. Walks with a stack of its own, so any
 * depth is safe to check. Throws `SluiceError('invalid_config')` naming the path.
 */
export function checkConfigInput(input: unknown, source = 'config'): void {
  const stack: { value: unknown; path: (string | number)[] }[] = [{ value: input, path: [] }];
  while (stack.length > 0) {
    const { value, path } = stack.pop()!;
    if (typeof value === 'string') {
      if (CONTROL_IN_VALUE.test(value)) {
        throw invalid(source, pathOf(path), 'must not contain control characters (NUL, ESC, …)');
      }
      if (malformedUtf16(value)) throw invalid(source, pathOf(path), 'is not valid Unicode (a lone surrogate)');
      continue;
    }
    if (typeof value !== 'object' || value === null) continue;
    if (path.length >= MAX_CONFIG_DEPTH) {
      throw invalid(source, pathOf(path), `nests deeper than ${MAX_CONFIG_DEPTH} levels`);
    }
    if (Array.isArray(value)) {
      value.forEach((item: unknown, i) => stack.push({ value: item, path: [...path, i] }));
      continue;
    }
    // Own keys, `__proto__` included when the parser defined it as one (yaml and JSON.parse do).
    for (const key of Object.keys(value)) {
      const at = pathOf([...path, key]);
      if (RESERVED_KEYS.has(key)) throw invalid(source, at, `${shown(key)} is a reserved word, not a name`);
      if (CONTROL_IN_KEY.test(key) || malformedUtf16(key)) {
        throw invalid(source, pathOf(path), `the key ${shown(key)} has control characters or is not valid Unicode`);
      }
      stack.push({ value: (value as Record<string, unknown>)[key], path: [...path, key] });
    }
  }
}

/** The deepest nesting of collections in a CST, walked without recursion; with where it is. */
function deepest(tokens: readonly CST.Token[]): { depth: number; offset: number } {
  let worst = { depth: 0, offset: 0 };
  const stack: { token: CST.Token | null | undefined; depth: number }[] = tokens.map((token) => ({ token, depth: 0 }));
  while (stack.length > 0) {
    const { token, depth } = stack.pop()!;
    if (!token) continue;
    if (token.type === 'document') {
      stack.push({ token: token.value, depth });
    } else if (token.type === 'block-map' || token.type === 'block-seq' || token.type === 'flow-collection') {
      const inner = depth + 1;
      if (inner > worst.depth) worst = { depth: inner, offset: token.offset };
      // Stop early: the answer is already "too deep".
      if (inner > MAX_CONFIG_DEPTH) return worst;
      for (const item of token.items) {
        if ('key' in item) stack.push({ token: item.key, depth: inner });
        stack.push({ token: item.value, depth: inner });
      }
    }
  }
  return worst;
}

/**
 * Reads a config document (YAML, or JSON, which YAML reads too) into a plain value. Its
 * nesting is measured on the parser's syntax tree, which the parser builds without
 * recursion, before the document is composed (which recurses); aliases are capped
 * (`maxAliasCount`), so a few lines cannot expand into millions of nodes. Any syntax error
 * or warning (duplicate keys, unknown tags) refuses the file with its line and column.
 * Throws `SluiceError('invalid_config')`.
 */
export function readConfigText(text: string, source: string): unknown {
  const { LineCounter, Parser, parseDocument } = yaml();
  const lines = new LineCounter();
  const where = (offset: number): string => {
    const { line, col } = lines.linePos(offset);
    return `line ${line}, column ${col}`;
  };
  let tokens: CST.Token[];
  try {
    tokens = [...new Parser(lines.addNewLine).parse(text)];
  } catch (cause) {
    throw new SluiceError(
      'invalid_config',
      `${source} is not valid YAML at line 1, column 1: ${(cause as Error).message}`,
      {
        cause,
      },
    );
  }
  const { depth, offset } = deepest(tokens);
  if (depth > MAX_CONFIG_DEPTH) {
    throw new SluiceError(
      'invalid_config',
      `${source} nests deeper than ${MAX_CONFIG_DEPTH} levels at ${where(offset)}: no config field is that deep`,
    );
  }
  try {
    const doc = parseDocument(text, { prettyErrors: false, uniqueKeys: true });
    const problem = doc.errors[0] ?? doc.warnings[0];
    if (problem) {
      const at = problem.pos[0];
      throw new SluiceError(
        'invalid_config',
        `${source} is not valid YAML at ${where(at)}: ${problem.message.split('\n')[0]}`,
        { cause: problem },
      );
    }
    try {
      return doc.toJS({ maxAliasCount: 100 }) as unknown;
    } catch (cause) {
      // An alias to no anchor, or aliases expanded past their cap: where the first alias is.
      const message = (cause as Error).message.split('\n')[0];
      throw new SluiceError('invalid_config', `${source} is not valid YAML at ${where(firstAlias(doc))}: ${message}`, {
        cause,
      });
    }
  } catch (cause) {
    if (cause instanceof SluiceError) throw cause;
    throw new SluiceError(
      'invalid_config',
      `${source} is not valid YAML at line 1, column 1: ${(cause as Error).message}`,
      {
        cause,
      },
    );
  }
}

/** The offset of the first alias that names no anchor, else of the first alias, else 0. */
function firstAlias(doc: Document.Parsed): number {
  let unresolved: number | undefined;
  let any: number | undefined;
  const { visit, isAlias } = yaml();
  visit(doc, {
    Alias(_key, node) {
      const at = node.range?.[0] ?? 0;
      any ??= at;
      if (isAlias(node) && node.resolve(doc) === undefined) {
        unresolved = at;
        return visit.BREAK;
      }
      return undefined;
    },
  });
  return unresolved ?? any ?? 0;
}
