import { defineConfig } from 'vitest/config';

// Tests run against sources: the `@sluice/source` export condition points every
// workspace package at its `src/index.ts`, so no build is needed first.
export default defineConfig({
  resolve: { conditions: ['@sluice/source'] },
  ssr: { resolve: { conditions: ['@sluice/source'], externalConditions: ['@sluice/source'] } },
  test: {
    include: ['packages/*/test/**/*.test.ts', 'apps/*/test/**/*.test.ts', 'test/**/*.test.ts'],
    exclude: ['**/node_modules/**', 'test/bench/**'],
    globalSetup: ['test/support/global-setup.ts'],
    testTimeout: 120_000,
    hookTimeout: 60_000,
    pool: 'forks',
    maxWorkers: 2,
  },
});
