// `npm run check`: every guard (STYLE.md, Tooling), run by .ci/run after the tests. Each
// runs even when one before it failed, so one run shows everything to fix; the exit code is
// non-zero when any failed. `npm run check:<name>` runs one of them alone.
import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { pnpmCommand } from './pnpm.mjs';

const ROOT = resolve(import.meta.dirname, '..');
const GUARDS = [
  ['format', 'Prettier: every file formatted (.prettierrc.json; .prettierignore lists what is not)'],
  ['cycles', 'dependency-cruiser: no import cycle in apps/*/src, packages/*/src'],
  ['deps', 'knip: no unused or unlisted dependency in any package.json'],
  ['size', 'every src file within 400 lines, every function within 80 of its own'],
  ['lint', 'ESLint: every package (deep imports, process.env, type-aware rules) and scripts/'],
];

// Through pnpm, so that turbo (check:lint) finds the package manager it runs the packages' lint with.
const [cmd, pre] = pnpmCommand();
const failed = [];
for (const [name, what] of GUARDS) {
  console.log(`\n== check:${name}: ${what}`);
  const started = Date.now();
  const run = spawnSync(cmd, [...pre, 'run', '--silent', `check:${name}`], { cwd: ROOT, stdio: 'inherit' });
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  if (run.status === 0) console.log(`== check:${name}: ok (${seconds} s)`);
  else {
    console.log(`== check:${name}: FAILED (${seconds} s)`);
    failed.push(name);
  }
}
if (failed.length > 0) {
  console.error(`\nguards failed: ${failed.join(', ')} (run \`npm run check:<name>\` for one alone)`);
  process.exit(1);
}
console.log('\nguards: all passed');
