import { afterAll, beforeAll, inject } from 'vitest';
import { startFleet, type Fleet, type FleetOptions } from './fleet.js';

/**
 * Starts a fleet before the file's tests and stops it after them, on the run's Redis.
 * Returns a getter: the fleet exists once `beforeAll` has run.
 */
export function useFleet(options: Omit<FleetOptions, 'redisUrl' | 'apps'>): () => Fleet {
  let fleet: Fleet | undefined;
  beforeAll(async () => {
    fleet = await startFleet({ ...options, redisUrl: inject('redisUrl'), apps: inject('apps') });
  });
  afterAll(async () => {
    await fleet?.stop();
  });
  return () => {
    if (!fleet) throw new Error('the fleet is not started yet');
    return fleet;
  };
}
