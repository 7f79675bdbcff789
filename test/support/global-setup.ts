import type { TestProject } from 'vitest/node';
import { startRedisServer, type RedisServer } from './redis-server.js';

declare module 'vitest' {
  export interface ProvidedContext {
    redisUrl: string;
  }
}

let server: RedisServer | undefined;

/** One private Redis for the run, unless REDIS_URL names one. Tests isolate by key prefix. */
export async function setup(project: TestProject): Promise<void> {
  let url = process.env.REDIS_URL;
  if (!url) {
    server = await startRedisServer();
    url = server.url;
  }
  project.provide('redisUrl', url);
}

export async function teardown(): Promise<void> {
  await server?.stop();
}
