import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build, type Plugin } from 'esbuild';
import { ROOT } from './process.js';

/** The apps a fleet or fault test spawns. */
export const BUNDLED_APPS = ['scheduler', 'worker', 'api'] as const;

/**
 * Test-only entries bundled with them: a worker that kills itself at a delivery step, and a
 * backend's campaign producer (the bench's `campaign` figure, the inject-kill scenario).
 */
const TEST_ENTRIES = {
  'crash-worker': 'test/support/crash-worker.ts',
  'inject-producer': 'test/support/inject-producer.ts',
} as const;

/** What a fleet test can spawn from the bundle directory. */
export type BundledApp = (typeof BUNDLED_APPS)[number] | keyof typeof TEST_ENTRIES;

/**
 * Our sources stay ours: every `@sluice/*` module and relative import goes into the bundle
 * (from its TypeScript, through the `@sluice/source` condition), every npm package stays
 * outside it, imported from where it is installed. A module's `import.meta.url` is its own
 * file's, so the Lua scripts it reads next to it are found.
 */
const sourcesOnly: Plugin = {
  name: 'sluice-sources-only',
  setup(b) {
    b.onResolve({ filter: /^[^./]/ }, async (args) => {
      if (args.path.startsWith('@sluice/') || args.path.startsWith('node:') || args.pluginData === 'installed')
        return undefined;
      const found = await b.resolve(args.path, {
        kind: args.kind,
        resolveDir: args.resolveDir,
        importer: args.importer,
        pluginData: 'installed',
      });
      return found.errors.length ? { errors: found.errors } : { path: found.path, external: true };
    });
    b.onLoad({ filter: /\.ts$/ }, (args) => ({
      loader: 'ts',
      contents: readFileSync(args.path, 'utf8').replaceAll(
        'import.meta.url',
        JSON.stringify(pathToFileURL(args.path).href),
      ),
    }));
  },
};

/**
 * Bundles the scheduler, worker and api from sources once per run, into `outdir/<app>.mjs`.
 * A fleet test spawns several of them per file; each compiling its own TypeScript with tsx
 * cost about 0.7 s of CPU per process, most of a fleet's start on two cores.
 */
export async function bundleApps(outdir: string): Promise<void> {
  await build({
    entryPoints: {
      ...Object.fromEntries(BUNDLED_APPS.map((app) => [app, join(ROOT, `apps/${app}/src/main.ts`)])),
      ...Object.fromEntries(Object.entries(TEST_ENTRIES).map(([name, path]) => [name, join(ROOT, path)])),
    },
    outdir,
    outExtension: { '.js': '.mjs' },
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    conditions: ['@sluice/source'],
    sourcemap: 'inline',
    logLevel: 'warning',
    plugins: [sourcesOnly],
  });
}
