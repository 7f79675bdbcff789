// The configuration reference (docs/reference/configuration.md), generated from the zod schema
// itself: every key with its type, its default and the first sentence of the TSDoc comment the
// schema's source gives it. The schema is walked at run time (types, defaults); the comments come
// from the TypeScript source of packages/core/src/config*.ts, matched to the run-time objects by
// their set of keys. A key without a comment is an error: the page says what every key means.
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { configSchema } from '@sluice/core';
import { ROOT, table } from './markdown.js';

/** The part of a zod 4 schema this walk reads (`schema._zod.def`). */
interface Def {
  type: string;
  shape?: Record<string, Schema>;
  innerType?: Schema;
  defaultValue?: unknown;
  in?: Schema;
  out?: Schema;
  element?: Schema;
  keyType?: Schema;
  valueType?: Schema;
  entries?: Record<string, string>;
  values?: unknown[];
  options?: Schema[];
  discriminator?: string;
  format?: string;
  checks?: Check[];
}
interface Schema {
  _zod: { def: Def };
}
/** A check of a number schema (`z.number().int().min(0)`): its kind, bound and whether it is inclusive. */
interface Check {
  _zod: { def: { check: string; value?: unknown; inclusive?: boolean; format?: string } };
}

const CORE_SRC = join(ROOT, 'packages/core/src');
/** Fields whose comment tells the type, not the meaning: a key of that type needs its own. */
const TYPE_ONLY = new Set(['name', 'secret', 'host', 'url']);

/** The first sentence of a TSDoc comment, on one line, without its tags. */
function firstSentence(doc: string): string {
  const text = doc
    .split('\n')
    .filter((line) => !/^\s*@/.test(line))
    .join(' ')
    .replace(/\s+/g, ' ')
    .trim();
  const end = text.search(/\.(\s|$)/);
  return end === -1 ? text : text.slice(0, end + 1);
}

/** The `@defaultValue` a comment states, if any. */
function statedDefault(doc: string): string | undefined {
  return /@defaultValue\s+(.+)/.exec(doc)?.[1]?.trim();
}

/** The TSDoc text of a node (the last `/** … *\/` before it), or undefined. */
function docOf(node: ts.Node, sf: ts.SourceFile): string | undefined {
  const ranges = ts.getLeadingCommentRanges(sf.text, node.getFullStart()) ?? [];
  const last = ranges.filter((r) => sf.text.startsWith('/**', r.pos)).at(-1);
  if (last === undefined) return undefined;
  return sf.text
    .slice(last.pos + 3, last.end - 2)
    .split('\n')
    .map((line) => line.replace(/^\s*\*\s?/, ''))
    .join('\n')
    .trim();
}

/** The identifier a schema expression starts from (`rate.optional()` → `rate`). */
function rootIdentifier(expr: ts.Expression): string | undefined {
  let e: ts.Expression = expr;
  for (;;) {
    if (ts.isIdentifier(e)) return e.text;
    if (ts.isCallExpression(e)) e = e.expression;
    else if (ts.isPropertyAccessExpression(e)) e = e.expression;
    else return undefined;
  }
}

/**
 * The key an object schema is for: the variable it is declared as (`metricsSchema`: `metrics`)
 * or the property it is the value of, through the calls chained on it (`.prefault({})`).
 */
function ownerOf(node: ts.Node): string | undefined {
  let n: ts.Node | undefined = node.parent;
  while (n !== undefined && !ts.isSourceFile(n)) {
    if (ts.isVariableDeclaration(n)) return ts.isIdentifier(n.name) ? n.name.text.replace(/Schema$/, '') : undefined;
    if (ts.isPropertyAssignment(n))
      return ts.isIdentifier(n.name) || ts.isStringLiteral(n.name) ? n.name.text : undefined;
    if (ts.isObjectLiteralExpression(n) || ts.isArrayLiteralExpression(n)) return undefined;
    n = n.parent;
  }
  return undefined;
}

/**
 * What the config sources say about each object of the schema: for each object literal given
 * to `z.strictObject`/`z.object` (spreads of a literal in the same file expanded), its keys
 * and each key's comment (its own, else the one on the declaration of the schema it names).
 */
function sourceDocs(): Map<string, Map<string, string>> {
  const files = readdirSync(CORE_SRC).filter((f) => /^(config.*|governor-config)\.ts$/.test(f));
  const declared = new Map<string, string>();
  const literals = new Map<string, ts.ObjectLiteralExpression>();
  const objects: { literal: ts.ObjectLiteralExpression; sf: ts.SourceFile; owner: string | undefined }[] = [];
  for (const file of files) {
    const sf = ts.createSourceFile(file, readFileSync(join(CORE_SRC, file), 'utf8'), ts.ScriptTarget.Latest, true);
    const visit = (node: ts.Node): void => {
      if (ts.isVariableStatement(node)) {
        const doc = docOf(node, sf);
        for (const d of node.declarationList.declarations) {
          if (!ts.isIdentifier(d.name)) continue;
          if (doc !== undefined) declared.set(d.name.text, doc);
          if (d.initializer && ts.isObjectLiteralExpression(d.initializer)) literals.set(d.name.text, d.initializer);
        }
      }
      if (
        ts.isCallExpression(node) &&
        ts.isPropertyAccessExpression(node.expression) &&
        ['strictObject', 'object', 'looseObject'].includes(node.expression.name.text) &&
        node.arguments[0] !== undefined &&
        ts.isObjectLiteralExpression(node.arguments[0])
      ) {
        objects.push({ literal: node.arguments[0], sf, owner: ownerOf(node) });
      }
      ts.forEachChild(node, visit);
    };
    visit(sf);
  }
  const byKeys = new Map<string, Map<string, string>>();
  for (const { literal, sf, owner } of objects) {
    const docs = new Map<string, string>();
    const keys: string[] = [];
    const add = (lit: ts.ObjectLiteralExpression): void => {
      for (const p of lit.properties) {
        if (ts.isSpreadAssignment(p) && ts.isIdentifier(p.expression)) {
          const spread = literals.get(p.expression.text);
          if (spread) add(spread);
          continue;
        }
        if (!(ts.isPropertyAssignment(p) || ts.isShorthandPropertyAssignment(p)) || !p.name) continue;
        const key = ts.isIdentifier(p.name) || ts.isStringLiteral(p.name) ? p.name.text : p.name.getText(sf);
        keys.push(key);
        const own = docOf(p, p.getSourceFile());
        const named = ts.isPropertyAssignment(p) ? rootIdentifier(p.initializer) : key;
        const doc = own ?? (named === undefined || TYPE_ONLY.has(named) ? undefined : declared.get(named));
        if (doc !== undefined) docs.set(key, doc);
      }
    };
    add(literal);
    const id = [...keys].sort().join(',');
    const known = byKeys.get(id);
    // Two literals with the same keys (perClass's four classes): keep every comment either has.
    byKeys.set(id, new Map([...(known ?? []), ...docs]));
    // And under the key that holds it, for two with the same keys but their own comments
    // (`metrics` and `health`: host and port each).
    if (owner !== undefined) byKeys.set(`${owner}|${id}`, docs);
  }
  return byKeys;
}

interface Row {
  key: string;
  type: string;
  default: string;
  meaning: string;
  /** A default too long for a table cell, shown after the table. */
  builtIn?: unknown;
}

/** Defaults longer than this go below the table. */
const MAX_DEFAULT_CHARS = 60;

/** One value as a short code span. */
function code(value: unknown): string {
  const text = JSON.stringify(value);
  return text === undefined ? '' : `\`${text}\``;
}

/** Strips the wrappers that do not change what a user writes: optional, default, prefault, pipe, nullable. */
function unwrap(schema: Schema): { inner: Schema; def: unknown; hasDefault: boolean; nullable: boolean } {
  let s = schema;
  let def: unknown;
  let hasDefault = false;
  let nullable = false;
  for (;;) {
    const d = s._zod.def;
    if ((d.type === 'default' || d.type === 'prefault') && d.innerType) {
      if (!hasDefault) {
        def = d.defaultValue;
        hasDefault = true;
      }
      s = d.innerType;
    } else if ((d.type === 'optional' || d.type === 'nonoptional' || d.type === 'readonly') && d.innerType) {
      s = d.innerType;
    } else if (d.type === 'nullable' && d.innerType) {
      nullable = true;
      s = d.innerType;
    } else if (d.type === 'pipe' && d.in) {
      s = d.in._zod.def.type === 'transform' && d.out ? d.out : d.in;
    } else return { inner: s, def, hasDefault, nullable };
  }
}

/** How a user writes a value of `schema`, in a few words. */
function typeOf(schema: Schema): string {
  const { inner, nullable } = unwrap(schema);
  const d = inner._zod.def;
  let t: string;
  switch (d.type) {
    case 'string':
      t = d.format && d.format !== 'regex' ? `string (${d.format})` : 'string';
      break;
    case 'number': {
      const checks = (d.checks ?? []).map((c) => c._zod.def);
      const range = checks.flatMap((c) => {
        if (c.check === 'greater_than') return [`${c.inclusive ? '≥' : '>'} ${String(c.value)}`];
        if (c.check === 'less_than' && Number(c.value) < Number.MAX_SAFE_INTEGER) {
          return [`${c.inclusive ? '≤' : '<'} ${String(c.value)}`];
        }
        return [];
      });
      const int = checks.some((c) => c.check === 'number_format' && /int/.test(String(c.format)));
      t = `${int ? 'integer' : 'number'}${range.length ? ` ${range.join(', ')}` : ''}`;
      break;
    }
    case 'boolean':
      t = 'boolean';
      break;
    case 'enum':
      t = Object.values(d.entries ?? {})
        .map((v) => `\`${v}\``)
        .join(' \\| ');
      break;
    case 'literal':
      t = (d.values ?? []).map((v) => `\`${String(v)}\``).join(' \\| ');
      break;
    case 'array':
      t = `list of ${d.element ? typeOf(d.element) : 'values'}`;
      break;
    case 'record':
      t = `map of ${d.valueType ? typeOf(d.valueType) : 'values'}`;
      break;
    case 'object':
      t = 'object';
      break;
    case 'union':
      t =
        d.discriminator === undefined ? (d.options ?? []).map(typeOf).join(' or ') : `object by \`${d.discriminator}\``;
      break;
    default:
      t = d.type;
  }
  return nullable ? `${t} or \`null\`` : t;
}

/** Merges the rows of a discriminated union's options: one row per key, qualified by the kinds that have it. */
function mergeOptions(perOption: { kind: string; rows: Row[] }[], discriminator: string, rows: Row[]): void {
  const all = perOption.length;
  const byKey = new Map<string, { row: Row; meanings: Map<string, string[]> }>();
  for (const { kind, rows: optionRows } of perOption) {
    for (const row of optionRows) {
      const known = byKey.get(row.key);
      const entry = known ?? { row: { ...row }, meanings: new Map<string, string[]>() };
      if (known && row.key.endsWith(`.${discriminator}`)) entry.row.type = `${entry.row.type} \\| ${row.type}`;
      entry.meanings.set(row.meaning, [...(entry.meanings.get(row.meaning) ?? []), kind]);
      byKey.set(row.key, entry);
    }
  }
  for (const { row, meanings } of byKey.values()) {
    const parts = [...meanings].map(([meaning, kinds]) =>
      kinds.length === all || row.key.endsWith(`.${discriminator}`)
        ? meaning
        : `(${discriminator}: ${kinds.join(', ')}) ${meaning}`,
    );
    rows.push({ ...row, meaning: row.key.endsWith(`.${discriminator}`) ? parts[0]! : parts.join('; ') });
  }
}

/** The rows of one schema at `path`: an object's keys, its nested objects, lists and maps walked too. */
function walk(schema: Schema, path: string, docs: Map<string, Map<string, string>>, rows: Row[]): void {
  const { inner } = unwrap(schema);
  const d = inner._zod.def;
  if (d.type === 'array' && d.element) return walk(d.element, `${path}[]`, docs, rows);
  if (d.type === 'record' && d.valueType) return walk(d.valueType, `${path}.<name>`, docs, rows);
  if (d.type === 'union' && d.discriminator !== undefined) {
    const perOption = (d.options ?? []).map((option) => {
      const tag = unwrap(option).inner._zod.def.shape?.[d.discriminator!];
      const kind = tag ? String(unwrap(tag).inner._zod.def.values?.[0]) : '?';
      const optionRows: Row[] = [];
      walk(option, path, docs, optionRows);
      return { kind, rows: optionRows };
    });
    return mergeOptions(perOption, d.discriminator, rows);
  }
  if (d.type !== 'object' || !d.shape) return;
  const keys = Object.keys(d.shape);
  const perClass = [...keys].sort().join(',') === 'critical,high,low,normal';
  const id = [...keys].sort().join(',');
  const owner = /([A-Za-z0-9]+)$/.exec(path)?.[1];
  const comments = docs.get(`${owner}|${id}`) ?? docs.get(id) ?? new Map<string, string>();
  for (const key of keys) {
    const child = d.shape[key]!;
    const full = path === '' ? key : `${path}.${key}`;
    const doc = comments.get(key) ?? (perClass ? `For \`${key}\` mail.` : undefined);
    const { hasDefault, def } = unwrap(child);
    const stated = doc === undefined ? undefined : statedDefault(doc);
    const dflt = hasDefault ? code(def) : (stated ?? (child._zod.def.type === 'optional' ? 'unset' : 'required'));
    const long = hasDefault && dflt.length > MAX_DEFAULT_CHARS;
    rows.push({
      key: full,
      type: typeOf(child),
      default: long ? 'built in (below)' : dflt,
      meaning: doc === undefined ? '' : firstSentence(doc),
      ...(long ? { builtIn: def } : {}),
    });
    walk(child, full, docs, rows);
  }
}

/** The page's Markdown, or throws naming every key without a comment. */
export function configurationPage(): string {
  const docs = sourceDocs();
  const rows: Row[] = [];
  walk(configSchema as unknown as Schema, '', docs, rows);
  const missing = rows.filter((r) => r.meaning === '').map((r) => r.key);
  if (missing.length > 0) {
    throw new Error(
      `config keys without a TSDoc comment in packages/core/src/config*.ts (the reference says what each means): ${missing.join(', ')}`,
    );
  }
  const sections = new Map<string, Row[]>([['', []]]);
  for (const row of rows) {
    const top = row.key.split(/[.[]/)[0]!;
    const nested = rows.some((r) => r.key.startsWith(`${top}.`) || r.key.startsWith(`${top}[`));
    const section = nested ? top : '';
    sections.set(section, [...(sections.get(section) ?? []), row]);
  }
  const out = [
    '# Configuration reference',
    '',
    '<!-- Generated by `npm run docs:reference` from the zod schema (packages/core/src/config*.ts); do not edit. -->',
    '',
    'Every key of the config file (YAML; `SLUICE_CONFIG` names it), with its type, its default and what it',
    'means. `<name>` stands for a name you choose (a provider, a pool, a stream); `[]` for each item of a',
    'list. A key marked `required` must be given when its parent is; `unset` means absent unless given.',
    'How to give the file and what the main knobs do: [Configuration](../operations/configuration.md).',
    '',
  ];
  for (const [top, list] of sections) {
    out.push(top === '' ? '## Top level' : `## \`${top}\``, '');
    out.push(
      table(
        ['key', 'type', 'default', 'meaning'],
        list.map((r) => [`\`${r.key}\``, r.type, r.default, r.meaning]),
      ),
      '',
    );
    for (const row of list.filter((r) => r.builtIn !== undefined)) {
      out.push(`Built-in \`${row.key}\`:`, '', '```json', JSON.stringify(row.builtIn, null, 2), '```', '');
    }
  }
  return out.join('\n');
}
