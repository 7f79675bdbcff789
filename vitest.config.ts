import { defineConfig } from 'vitest/config';

// Tests run against sources: the `@sluice/source` export condition points every
// workspace package at its `src/index.ts`, so no build is needed first.
const sources = {
  resolve: { conditions: ['@sluice/source'] },
  ssr: { resolve: { conditions: ['@sluice/source'], externalConditions: ['@sluice/source'] } },
};

/** The fleet tests the `cluster` project runs on a Redis Cluster. */
const CLUSTER_FILES = [
  'test/fleet-smoke.test.ts',
  'test/fleet-rates.test.ts',
  'test/fleet-priority.test.ts',
  'test/fleet-pause.test.ts',
  'test/fleet-crash.test.ts',
  'test/fleet-outcomes.test.ts',
  'test/fleet-outcome-stream.test.ts',
  'test/fleet-inject.test.ts',
  'test/cluster.test.ts',
  'test/cluster-failover.test.ts',
];

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
          exclude: ['**/node_modules/**', 'test/bench/**', 'test/faults/**', 'test/cluster*.test.ts'],
          fileParallelism: false,
        },
      },
      {
        // The fleet's core files again, on a local Redis Cluster (three masters, a replica each)
        // with the same assertions: queues and limiter there, three dispatch partitions.
        extends: true,
        test: {
          name: 'cluster',
          include: CLUSTER_FILES,
          env: { SLUICE_TEST_CLUSTER: '1' },
          fileParallelism: false,
        },
      },
    ],
  },
});
