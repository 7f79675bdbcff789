// The size guard (`npm run check:size`, run by .ci/run; STYLE.md, Layout and boundaries):
// no file in apps/*/src or packages/*/src over 400 lines, and no function in any of them over
// 80 lines of its own. A function's own
// lines are its lines less those of the functions inside it (each of which is measured on its
// own), so a factory that returns its methods is measured method by method.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import ts from 'typescript';

const ROOT = resolve(import.meta.dirname, '..');
const MAX_FILE_LINES = 400;
const MAX_FUNCTION_LINES = 80;

/** The `src` folders of every app and package. */
function sourceRoots() {
  return ['apps', 'packages'].flatMap((group) =>
    readdirSync(join(ROOT, group), { withFileTypes: true })
      .filter((d) => d.isDirectory())
      .map((d) => `${group}/${d.name}/src`)
      .filter((src) => statSync(join(ROOT, src), { throwIfNoEntry: false })?.isDirectory()),
  );
}

/** Every file under `src` (repository-relative, `/`-separated), build output and dependencies left out. */
function filesUnder(src) {
  return readdirSync(join(ROOT, src), { recursive: true, withFileTypes: true })
    .filter((d) => d.isFile())
    .map((d) =>
      relative(ROOT, join(d.parentPath ?? d.path, d.name))
        .split('\\')
        .join('/'),
    )
    .filter((file) => !/(^|\/)(node_modules|dist)\//.test(file));
}

/** Lines as `wc -l` counts them, plus a last line without its newline. */
function lineCount(text) {
  if (text.length === 0) return 0;
  return text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
}

/** A function's name for the report: its own, its variable's, its property's, or where it starts. */
function nameOf(node, sf) {
  const own = node.name ?? (ts.isConstructorDeclaration(node) ? { text: 'constructor' } : undefined);
  if (own && 'text' in own) return own.text;
  const parent = node.parent;
  if (
    parent &&
    (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent) || ts.isPropertyDeclaration(parent))
  ) {
    if (ts.isIdentifier(parent.name) || ts.isStringLiteral(parent.name)) return parent.name.text;
  }
  return `(anonymous, line ${sf.getLineAndCharacterOfPosition(node.getStart(sf)).line + 1})`;
}

/** The functions directly inside `node`'s body (not inside one of them). */
function innerFunctions(node) {
  const found = [];
  const visit = (child) => {
    if (ts.isFunctionLike(child) && 'body' in child && child.body) found.push(child);
    else ts.forEachChild(child, visit);
  };
  ts.forEachChild(node, visit);
  return found;
}

/**
 * A function's own lines: the lines from its first token to its last that hold code of its
 * own. A line whose only code belongs to an inner function is the inner one's; a blank or
 * comment-only line counts for whichever function it lies in.
 */
function ownLines(node, sf) {
  const text = sf.text;
  const start = node.getStart(sf);
  const end = node.end;
  const inner = innerFunctions(node).map((f) => [f.getStart(sf), f.end]);
  const inInner = (pos) => inner.some(([s, e]) => pos >= s && pos < e);
  let own = 0;
  let lineStart = start;
  while (lineStart < end) {
    let lineEnd = text.indexOf('\n', lineStart);
    if (lineEnd === -1 || lineEnd > end) lineEnd = end;
    let code = false;
    let outerCode = false;
    for (let i = lineStart; i < lineEnd; i++) {
      if (/\s/.test(text[i])) continue;
      code = true;
      if (!inInner(i)) {
        outerCode = true;
        break;
      }
    }
    if (outerCode || (!code && !inInner(lineStart))) own++;
    lineStart = lineEnd + 1;
  }
  return own;
}

/** Functions in one file with more own lines than allowed. */
function longFunctions(file, text) {
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const long = [];
  const visit = (node) => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body) {
      const lines = ownLines(node, sf);
      if (lines > MAX_FUNCTION_LINES) {
        const line = sf.getLineAndCharacterOfPosition(node.getStart(sf)).line + 1;
        long.push({ where: `${file}:${line}`, name: nameOf(node, sf), lines });
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return long;
}

const bigFiles = [];
const bigFunctions = [];
let files = 0;
for (const src of sourceRoots()) {
  for (const file of filesUnder(src)) {
    const text = readFileSync(join(ROOT, file), 'utf8');
    if (text.includes('\0')) continue;
    files++;
    const lines = lineCount(text);
    if (lines > MAX_FILE_LINES) bigFiles.push({ file, lines });
    if (file.endsWith('.ts')) {
      bigFunctions.push(...longFunctions(file, text));
    }
  }
}

for (const { file, lines } of bigFiles) {
  console.error(`check-size: ${file} has ${lines} lines (at most ${MAX_FILE_LINES}): split it by operation`);
}
for (const { where, name, lines } of bigFunctions) {
  console.error(
    `check-size: ${where} ${name} has ${lines} lines of its own (at most ${MAX_FUNCTION_LINES}): give its steps names`,
  );
}
if (bigFiles.length + bigFunctions.length > 0) {
  console.error(`check-size: ${bigFiles.length} file(s) and ${bigFunctions.length} function(s) too long`);
  process.exit(1);
}
console.log(`check-size: ${files} files within ${MAX_FILE_LINES} lines, their functions within ${MAX_FUNCTION_LINES}`);
