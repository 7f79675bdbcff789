import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { bundleApps } from './app-bundle.js';
import { startRedisServer, type RedisServer } from './redis-server.js';

declare module 'vitest' {
  export interface ProvidedContext {
    redisUrl: string;
    /** The scheduler and worker, bundled from sources once for the run (see app-bundle.ts). */
    apps: string;
  }
}

let server: RedisServer | undefined;
let apps: string | undefined;

/** One private Redis for the run, unless REDIS_URL names one. Tests isolate by key prefix. */
export async function setup(project: TestProject): Promise<void> {
  let url = process.env.REDIS_URL;
  if (!url) {
    server = await startRedisServer();
    url = server.url;
  }
  project.provide('redisUrl', url);
  apps = mkdtempSync(join(tmpdir(), 'sluice-apps-'));
  await bundleApps(apps);
  project.provide('apps', apps);
}

export async function teardown(): Promise<void> {
  await server?.stop();
  if (apps) rmSync(apps, { recursive: true, force: true });
}
