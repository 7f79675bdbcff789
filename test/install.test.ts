import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { waitFor } from './support/fleet.js';
import { childEnv } from './support/env.js';
import { ROOT } from './support/process.js';
import { useFleet } from './support/use-fleet.js';

// A backend in its own repository: the client packed by the guide's command (docs/guide/sending.md)
// (scripts/pack-client.mjs), installed from the tarballs with plain npm in a project outside
// the workspace, and used from plain Node and from TypeScript, against a running fleet.

const run = promisify(execFile);
const fleet = useFleet({ schedulers: 1, workers: 1 });
const clientManifest = JSON.parse(readFileSync(join(ROOT, 'packages/client/package.json'), 'utf8')) as {
  version: string;
};

/** A project of a backend's, outside the workspace: nothing above it resolves `@sluice/*`. */
let project = '';
/** How long each step took, printed at the end. */
const took: Record<string, number> = {};

async function timed<T>(step: string, work: () => Promise<T>): Promise<T> {
  const started = Date.now();
  try {
    return await work();
  } finally {
    took[step] = Date.now() - started;
  }
}

/** Installed `@sluice/*` packages of the project: name → its directory. */
function installed(): Map<string, string> {
  const scope = join(project, 'node_modules/@sluice');
  return new Map(readdirSync(scope).map((name) => [`@sluice/${name}`, join(scope, name)]));
}

beforeAll(async () => {
  project = mkdtempSync(join(tmpdir(), 'sluice-backend-'));
  const packed = join(project, 'tarballs');
  // The script prints the install command it leaves the tarballs for; the test runs it as printed.
  const { stdout } = await timed('pack', () =>
    run(process.execPath, ['scripts/pack-client.mjs', packed], { cwd: ROOT, env: childEnv(), maxBuffer: 1 << 24 }),
  );
  const command = stdout.trim().split('\n').at(-1) ?? '';
  expect(command).toMatch(/^npm install /);
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'backend', private: true, type: 'module' }));
  const [, ...args] = command.split(' ');
  await timed('npm install', () =>
    run('npm', [...args, '--no-audit', '--no-fund', '--prefer-offline'], {
      cwd: project,
      env: childEnv(),
      maxBuffer: 1 << 24,
    }),
  );
}, 240_000);

afterAll(() => {
  console.log(
    `install: ${Object.entries(took)
      .map(([step, ms]) => `${step} ${(ms / 1000).toFixed(1)} s`)
      .join(', ')}`,
  );
  if (project) rmSync(project, { recursive: true, force: true });
});

it('installs the client and what it needs from tarballs: built files, Lua scripts, LICENSE, registry ranges', () => {
  const packages = installed();
  expect([...packages.keys()].sort()).toEqual(['@sluice/client', '@sluice/core', '@sluice/events', '@sluice/store']);
  const license = readFileSync(join(ROOT, 'LICENSE'), 'utf8');
  const lock = JSON.parse(readFileSync(join(project, 'package-lock.json'), 'utf8')) as {
    packages: Record<string, { version: string; resolved: string }>;
  };
  for (const [name, dir] of packages) {
    const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as {
      version: string;
      license: string;
      dependencies?: Record<string, string>;
      exports: Record<string, Record<string, string>>;
    };
    expect(manifest.version, name).toBe(clientManifest.version);
    expect(manifest.license, name).toBe('Apache-2.0');
    expect(readFileSync(join(dir, 'LICENSE'), 'utf8'), `${name} LICENSE`).toBe(license);
    // Only what the build made: no sources (the `@sluice/source` condition finds nothing here).
    expect(readdirSync(dir).sort(), name).toEqual(['LICENSE', 'README.md', 'dist', 'package.json']);
    // Every published condition names a file of the tarball (TypeScript would fall back from a
    // missing `types` to the `.d.ts` beside `default`, hiding a wrong path); the workspace's
    // `@sluice/source` names one that is not there, and no consumer sets that condition.
    for (const [condition, target] of Object.entries(manifest.exports['.'] ?? {})) {
      expect(existsSync(join(dir, target)), `${name} ${condition} → ${target}`).toBe(condition !== '@sluice/source');
    }
    for (const [dep, range] of Object.entries(manifest.dependencies ?? {})) {
      if (dep.startsWith('@sluice/')) expect(range, `${name} → ${dep}`).toBe(`^${clientManifest.version}`);
    }
    // From our tarball, one copy each: none fetched from a registry under our name.
    expect(lock.packages[`node_modules/${name}`]?.resolved, name).toMatch(/^file:.*\.tgz$/);
    expect(Object.keys(lock.packages).filter((path) => path.endsWith(`node_modules/${name}`))).toHaveLength(1);
  }
  // store reads its Lua scripts next to its code at run time.
  const lua = readdirSync(join(ROOT, 'packages/store/src/lua')).filter((f) => f.endsWith('.lua'));
  expect(lua.length).toBeGreaterThan(0);
  expect(readdirSync(join(packages.get('@sluice/store')!, 'dist/lua')).sort()).toEqual(lua.sort());
});

it("a backend's plain Node script sends through the fleet and reads `sent`; a bad message throws a SluiceError", async () => {
  writeFileSync(
    join(project, 'send.mjs'),
    `import { createClient, SluiceError } from '@sluice/client';

const [redis, prefix] = process.argv.slice(2);
const sluice = createClient({ redis, prefix });
const report = { resolved: import.meta.resolve('@sluice/client') };
try {
  await sluice.send({ from: 'Acme <news@acme.test>', to: 'not an address', subject: 'hi', text: 'hi' });
  report.invalid = 'accepted';
} catch (err) {
  report.invalid = { sluiceError: err instanceof SluiceError, code: err.code, path: err.path };
}
const { id } = await sluice.send({ from: 'Acme <news@acme.test>', to: 'jane@example.test', subject: 'installed', text: 'hi' });
report.id = id;
let record = await sluice.messages.status(id);
for (const deadline = Date.now() + 20_000; record?.state !== 'sent' && Date.now() < deadline; ) {
  await new Promise((resolve) => setTimeout(resolve, 100));
  record = await sluice.messages.status(id);
}
report.state = record?.state;
await sluice.close();
console.log(JSON.stringify(report));
`,
  );
  // No NODE_OPTIONS of the test run's: the script resolves as a backend's would.
  const { stdout } = await timed('script', () =>
    run(process.execPath, ['send.mjs', inject('redisUrl'), fleet().prefix], {
      cwd: project,
      env: childEnv({ NODE_OPTIONS: undefined }),
      timeout: 60_000,
    }),
  );
  const report = JSON.parse(stdout.trim().split('\n').at(-1)!) as {
    resolved: string;
    invalid: unknown;
    id: string;
    state: string;
  };
  expect(report.resolved).toBe(`file://${project}/node_modules/@sluice/client/dist/index.js`);
  expect(report.invalid).toEqual({ sluiceError: true, code: 'invalid_message', path: 'to' });
  expect(report.state).toBe('sent');
  // What the ESP received, not our own books: the message arrived at the sandbox, once.
  const arrived = await waitFor(
    () =>
      fleet()
        .sandbox.accepted()
        .filter((m) => m.sluiceId === report.id),
    5_000,
    'the message at the sandbox',
  );
  expect(arrived).toHaveLength(1);
  expect(arrived[0]).toMatchObject({ to: ['jane@example.test'], subject: 'installed' });
});

it('a TypeScript backend type-checks against the packed types (module nodenext)', async () => {
  writeFileSync(
    join(project, 'backend.ts'),
    `import { createClient, SluiceError, type MessageRecord, type SendResult, type SluiceErrorCode } from '@sluice/client';

const sluice = createClient({ redis: 'redis://127.0.0.1:6379', prefix: 'sluice' });
const sent: SendResult = await sluice.send({ from: 'a@acme.test', to: 'b@example.test', subject: 's', text: 't' });
const record: MessageRecord | null = await sluice.messages.status(sent.id);
// Types that resolved to \`any\` would make this directive unused, an error.
// @ts-expect-error: \`to\` is an address, not a number
await sluice.send({ from: 'a@acme.test', to: 1, subject: 's', text: 't' });
try {
  await sluice.sendBulk([]);
} catch (err) {
  if (err instanceof SluiceError) {
    const code: SluiceErrorCode = err.code;
    console.log(code, err.action, err.path, record?.state);
  }
}
await sluice.close();
`,
  );
  writeFileSync(
    join(project, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        module: 'nodenext',
        moduleResolution: 'nodenext',
        target: 'es2022',
        strict: true,
        noEmit: true,
        skipLibCheck: true,
        types: ['node'],
        // Node's types from the workspace: the backend's own @types/node, without a download.
        typeRoots: [join(ROOT, 'node_modules/@types')],
      },
      files: ['backend.ts'],
    }),
  );
  const tsc = join(ROOT, 'node_modules/typescript/bin/tsc');
  const checked = await timed('tsc', () =>
    run(process.execPath, [tsc, '-p', 'tsconfig.json'], { cwd: project, env: childEnv() }).then(
      () => 'ok',
      (err: Error & { stdout?: string }) => err.stdout || err.message,
    ),
  );
  expect(checked).toBe('ok');
});
