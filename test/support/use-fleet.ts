import { afterAll, beforeAll, inject } from 'vitest';
import { startFleet, type Fleet, type FleetOptions } from './fleet.js';

/**
 * Starts a fleet before the file's tests and stops it after them, on the run's Redis (on the
 * run's Redis Cluster in the `cluster` project).
 * Returns a getter: the fleet exists once `beforeAll` has run.
 */
export function useFleet(options: Omit<FleetOptions, 'redisUrl' | 'apps'>): () => Fleet {
  let fleet: Fleet | undefined;
  beforeAll(async () => {
    // The `cluster` project runs the same files on a Redis Cluster (vitest.config.ts).
    const cluster = process.env.SLUICE_TEST_CLUSTER === '1' ? inject('clusterSeeds') : undefined;
    if (cluster?.length === 0) throw new Error('SLUICE_TEST_CLUSTER is set, but the run started no cluster');
    fleet = await startFleet({ ...options, redisUrl: inject('redisUrl'), apps: inject('apps'), cluster });
  });
  afterAll(async () => {
    await fleet?.stop();
  });
  return () => {
    if (!fleet) throw new Error('the fleet is not started yet');
    return fleet;
  };
}
