import { defineConfig } from 'vitest/config';

// `pnpm faults`: the fault scenarios and the fuzzers, one file at a time (each starts real
// processes or hammers one Redis), against sources like the rest of the suite.
export default defineConfig({
  resolve: { conditions: ['@sluice/source'] },
  ssr: { resolve: { conditions: ['@sluice/source'], externalConditions: ['@sluice/source'] } },
  test: {
    root: new URL('../..', import.meta.url).pathname,
    include: ['test/faults/**/*.test.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    testTimeout: 180_000,
    hookTimeout: 60_000,
    pool: 'forks',
    maxWorkers: 1,
    fileParallelism: false,
  },
});
