import { defineConfig } from 'vitest/config';

// Tests run against sources: the `@sluice/source` export condition points every
// workspace package at its `src/index.ts`, so no build is needed first.
const sources = {
  resolve: { conditions: ['@sluice/source'] },
  ssr: { resolve: { conditions: ['@sluice/source'], externalConditions: ['@sluice/source'] } },
};

export default defineConfig({
  ...sources,
  test: {
    exclude: ['**/node_modules/**', '**/dist/**'],
    globalSetup: ['test/support/global-setup.ts'],
    testTimeout: 120_000,
    hookTimeout: 60_000,
    pool: 'forks',
    maxWorkers: 2,
    projects: [
      {
        extends: true,
        test: { name: 'packages', include: ['packages/*/test/**/*.test.ts', 'apps/*/test/**/*.test.ts'] },
      },
      {
        // Fleets of real processes measure rates and latencies: one at a time, so they do
        // not share this machine's cores with each other.
        extends: true,
        test: {
          name: 'fleet',
          include: ['test/**/*.test.ts'],
          exclude: ['**/node_modules/**', 'test/bench/**', 'test/faults/**'],
          fileParallelism: false,
        },
      },
    ],
  },
});
