// `pnpm classify:report`: the classifier against the reply corpus, accuracy per family and per
// receiver, the held-out fifth apart, and every misread. `--held-out` lists only those.
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { CLASSIFIER_VERSION } from '../src/classify.js';
import { loadCorpus, score, type Scored } from './corpus.js';

// Piped into `head`: stop quietly when the reader has had enough.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code === 'EPIPE') process.exit(0);
  throw error;
});
// `--corpus <file>`: another set in the corpus's format (replies never shown to the rules, to
// measure them on), instead of the corpus.
const fileArg = process.argv.indexOf('--corpus');
const file = fileArg > 0 ? process.argv[fileArg + 1] : undefined;
if (fileArg > 0 && file === undefined) {
  process.stderr.write('classify:report: --corpus takes a file in the corpus format (JSON Lines)\n');
  process.exit(2);
}
const scored = score(file === undefined ? loadCorpus() : loadCorpus(pathToFileURL(resolve(file))));
const heldOutOnly = process.argv.includes('--held-out');

const pct = (part: number, whole: number): string => (whole === 0 ? '-' : `${((100 * part) / whole).toFixed(1)}%`);
function line(name: string, rows: readonly Scored[]): string {
  const right = rows.filter((r) => r.right).length;
  const severe = rows.filter((r) => r.severe).length;
  return `${name.padEnd(22)} ${String(right).padStart(4)}/${String(rows.length).padEnd(4)} ${pct(right, rows.length).padStart(6)}${severe > 0 ? `  severe ${severe}` : ''}`;
}
function groupBy(rows: readonly Scored[], key: (r: Scored) => string): [string, Scored[]][] {
  const groups = new Map<string, Scored[]>();
  for (const r of rows) groups.set(key(r), [...(groups.get(key(r)) ?? []), r]);
  return [...groups].sort((a, b) => b[1].length - a[1].length);
}

const written = scored.filter((r) => !r.heldOut);
const held = scored.filter((r) => r.heldOut);
console.log(`classifier ${CLASSIFIER_VERSION}, corpus of ${scored.length} replies`);
console.log(line('all', scored));
console.log(line('rules written against', written));
console.log(line('held out (a fifth)', held));
console.log(`receivers: ${new Set(scored.map((r) => r.entry.receiver)).size}`);
console.log('\nper family (expected)');
for (const [family, rows] of groupBy(scored, (r) => r.entry.family)) console.log(line(family, rows));
console.log('\nper receiver');
for (const [receiver, rows] of groupBy(scored, (r) => r.entry.receiver)) console.log(line(receiver, rows));
const wrong = scored.filter((r) => !r.right && (!heldOutOnly || r.heldOut));
console.log(`\nconfusions (${wrong.length}): expected → got [rule] receiver: reply`);
for (const r of wrong.sort((a, b) => a.entry.family.localeCompare(b.entry.family))) {
  console.log(
    `${r.severe ? '!! ' : ''}${r.entry.family} → ${r.got.family} [${r.got.rule}]${r.heldOut ? ' (held out)' : ''} ${r.entry.receiver}: ${r.entry.reply.slice(0, 160)}`,
  );
}
