// `pnpm faults [scenario…]`: installs, then runs the fault scenarios and fuzzers of
// test/faults/ against sources on a private Redis (or REDIS_URL), one file at a time, and
// prints each scenario's figures and their totals. A scenario name filters the files
// (`pnpm faults crash-storm`); SLUICE_FAULTS_SEED replays a run's randomness.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { checkNode, pnpm, pnpmCommand } from './pnpm.mjs';

const TOTALS = [
  ['kills', 'processes killed'],
  ['lost', 'messages lost'],
  ['duplicatesFlagged', 'duplicates flagged ambiguous'],
  ['duplicatesUnflagged', 'duplicates unflagged'],
  ['stuck', 'messages stuck'],
  ['recoverySeconds', 'recovery seconds (worst)'],
  ['arrivalsDuringOutage', 'arrivals while Redis was down'],
  ['fuzzCases', 'fuzz cases run'],
  ['nonSluiceErrors', 'refusals not a SluiceError'],
];

checkNode();
pnpm(['install', '--frozen-lockfile', '--reporter=silent']);
const dir = mkdtempSync(join(tmpdir(), 'sluice-faults-'));
const report = join(dir, 'figures.jsonl');
const [cmd, pre] = pnpmCommand();
const run = spawnSync(
  cmd,
  [...pre, 'exec', 'vitest', 'run', '--config', 'test/faults/vitest.config.ts', ...process.argv.slice(2)],
  { stdio: 'inherit', env: { ...process.env, SLUICE_FAULTS_REPORT: report } },
);

const rows = existsSync(report)
  ? readFileSync(report, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line))
  : [];
rmSync(dir, { recursive: true, force: true });
console.log('\nfaults: figures by scenario');
for (const { scenario, ...figures } of rows) {
  console.log(
    `  ${scenario.padEnd(28)} ${Object.entries(figures)
      .map(([k, v]) => `${k} ${v}`)
      .join(' · ')}`,
  );
}
console.log('faults: totals');
for (const [key, label] of TOTALS) {
  const values = rows.map((r) => r[key]).filter((v) => typeof v === 'number');
  const total = key === 'recoverySeconds' ? Math.max(0, ...values) : values.reduce((a, b) => a + b, 0);
  console.log(`  ${label.padEnd(32)} ${values.length ? Math.round(total * 100) / 100 : '-'}`);
}
process.exit(run.status ?? 1);
