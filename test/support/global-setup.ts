import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { bundleApps } from './app-bundle.js';
import { startRedisServer, type RedisServer } from './redis-server.js';
import { startRedisCluster, type RedisCluster } from './redis-cluster.js';

declare module 'vitest' {
  export interface ProvidedContext {
    redisUrl: string;
    /** A local Redis Cluster's seeds (three masters, a replica each) for the `cluster` project's fleets. */
    clusterSeeds: string[];
    /** The scheduler and worker, bundled from sources once for the run (see app-bundle.ts). */
    apps: string;
  }
}

let server: RedisServer | undefined;
let cluster: RedisCluster | undefined;
let apps: string | undefined;

/** One private Redis for the run, unless REDIS_URL names one. Tests isolate by key prefix. */
export async function setup(project: TestProject): Promise<void> {
  let url = process.env.REDIS_URL;
  if (!url) {
    server = await startRedisServer();
    url = server.url;
  }
  project.provide('redisUrl', url);
  // The `cluster` project's fleets run on a three-master cluster of the run's own.
  if (runsClusterProject(project)) {
    cluster = await startRedisCluster();
    project.provide('clusterSeeds', [...cluster.seeds]);
  } else project.provide('clusterSeeds', []);
  apps = mkdtempSync(join(tmpdir(), 'sluice-apps-'));
  await bundleApps(apps);
  project.provide('apps', apps);
}

/** Whether this run includes the `cluster` project (started with the suite, or named alone). */
function runsClusterProject(project: TestProject): boolean {
  return project.vitest.projects.some((p) => p.name === 'cluster');
}

export async function teardown(): Promise<void> {
  await cluster?.stop();
  await server?.stop();
  if (apps) rmSync(apps, { recursive: true, force: true });
}
