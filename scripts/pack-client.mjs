// `pnpm pack:client [dir]`: builds `@sluice/client` and the workspace packages it depends on,
// then packs each into a tarball in `dir` (default `.sluice/packages`), which a backend in its
// own repository installs with `npm install <dir>/*.tgz` (docs/guide/sending.md, "Install the client").
// test/install.test.ts runs this script, so the guide's commands and the test cannot drift.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { pnpmCommand } from './pnpm.mjs';

const ROOT = resolve(import.meta.dirname, '..');
// The client and every workspace package it depends on, directly or not: pnpm computes the set.
const FILTER = '@sluice/client...';

/** Runs pnpm at the root; returns its stdout (its stderr goes to ours), or exits on failure. */
function pnpm(args) {
  const [cmd, pre] = pnpmCommand();
  const run = spawnSync(cmd, [...pre, ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'], encoding: 'utf8' });
  if (run.status !== 0) {
    process.stderr.write(run.stdout ?? '');
    console.error(`sluice: \`pnpm ${args.join(' ')}\` failed`);
    process.exit(run.status ?? 1);
  }
  return run.stdout;
}

function fail(message) {
  console.error(`sluice: ${message}`);
  process.exit(1);
}

const dir = resolve(process.argv[2] ?? join(ROOT, '.sluice/packages'));
/** @type {{ name: string, version: string, path: string, private: boolean }[]} */
const packages = JSON.parse(pnpm(['ls', '-r', '--filter', FILTER, '--depth', '-1', '--json']));
const client = packages.find((p) => p.name === '@sluice/client');
if (!client) fail(`no @sluice/client in the workspace`);

// The policy (CHANGELOG.md): these packages are released together, under one version.
for (const p of packages) {
  if (p.private) fail(`${p.name} is private: a backend could not install the client (it needs ${p.name})`);
  if (p.version !== client.version)
    fail(`${p.name} is ${p.version}, @sluice/client ${client.version}: they are released together (CHANGELOG.md)`);
  if (!existsSync(join(p.path, 'LICENSE'))) fail(`${relative(ROOT, p.path)}/LICENSE is missing`);
}

// A fresh build: nothing a removed source left in dist/ goes into a tarball. turbo restores an
// unchanged package's dist/ from its cache, so a second run takes seconds.
for (const p of packages) rmSync(join(p.path, 'dist'), { recursive: true, force: true });
pnpm(['exec', 'turbo', 'run', 'build', `--filter=${FILTER}`, '--output-logs=errors-only']);

mkdirSync(dir, { recursive: true });
const ours = (file) => packages.some((p) => file.startsWith(`${p.name.replace('@', '').replace('/', '-')}-`));
for (const file of readdirSync(dir)) if (file.endsWith('.tgz') && ours(file)) rmSync(join(dir, file));
// pnpm writes each `workspace:^` dependency as `^<version>`, the range a registry would serve.
pnpm(['-r', '--filter', FILTER, 'pack', '--pack-destination', dir]);

const tarballs = readdirSync(dir)
  .filter((file) => file.endsWith('.tgz') && ours(file))
  .map((file) => join(dir, file));
if (tarballs.length !== packages.length)
  fail(`expected ${packages.length} tarballs in ${dir}, found ${tarballs.length}`);
console.error(`sluice: packed ${packages.map((p) => `${p.name}@${p.version}`).join(', ')} into ${dir}; install with:`);
console.log(`npm install ${tarballs.join(' ')}`);
