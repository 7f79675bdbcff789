import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { parse } from 'yaml';
import { loadConfig, parseConfig } from '@sluice/core';
import { startHealth, type HealthServer } from '@sluice/ops';
import { ROOT } from './support/process.js';
import { startRedisServer, type RedisServer } from './support/redis-server.js';

// infra/docker-compose.yml, read as Docker Compose reads it (Docker does not run here): the
// whole fleet is there, every Sluice service has a health check on its /readyz, and waits for a
// Redis that answers. The health check's own command is run against a real /readyz.

interface Service {
  command?: string[];
  environment?: Record<string, string> & { '<<'?: Record<string, string> };
  depends_on?: Record<string, { condition: string }> | string[];
  healthcheck?: { test: string[]; interval?: string; start_period?: string };
  stop_grace_period?: string;
}
const compose = parse(readFileSync(join(ROOT, 'infra/docker-compose.yml'), 'utf8'), { merge: true }) as {
  services: Record<string, Service>;
};
const SLUICE = ['scheduler', 'worker', 'api', 'admin'];

/** A service's environment with `<<` merged (YAML merge keys, as Compose applies them). */
const envOf = (s: Service): Record<string, string> => ({ ...s.environment?.['<<'], ...s.environment });
const seconds = (d: string | undefined): number => Number(/^(\d+)s$/.exec(d ?? '')?.[1] ?? NaN);

let redis: RedisServer;
let health: HealthServer;
beforeAll(async () => {
  redis = await startRedisServer();
  health = await startHealth({ config: parseConfig({ redis: { url: redis.url } }), port: 0 });
});
afterAll(async () => {
  await health?.close();
  await redis?.stop();
});

it('runs Redis, the sandbox, a scheduler, workers, the api and the admin app', () => {
  for (const name of ['redis', 'sandbox', ...SLUICE]) expect(compose.services[name], name).toBeDefined();
  for (const name of SLUICE) expect(compose.services[name]!.command?.join(' ')).toBe(`node apps/${name}/dist/main.js`);
});

it("checks every Sluice service's /readyz on its health port, after a Redis that answers", () => {
  expect(compose.services.redis!.healthcheck?.test).toEqual(['CMD', 'redis-cli', 'ping']);
  for (const name of SLUICE) {
    const service = compose.services[name]!;
    const env = envOf(service);
    expect(env.SLUICE_HEALTH_PORT, name).toBe('9465');
    const test = service.healthcheck?.test ?? [];
    expect(test.slice(0, 3), name).toEqual(['CMD', 'node', '-e']);
    expect(test[3], name).toContain(`http://127.0.0.1:${env.SLUICE_HEALTH_PORT}/readyz`);
    const deps = service.depends_on as Record<string, { condition: string }>;
    expect(deps.redis, name).toEqual({ condition: 'service_healthy' });
    // The config the service reads, with its environment: the health port is taken.
    const config = loadConfig({ path: join(ROOT, 'infra/sluice.yaml'), env: { SLUICE_HEALTH_PORT: '9465' } });
    expect(config.health).toEqual({ host: '127.0.0.1', port: 9465 });
  }
  // Docker's grace outlasts each process's own shutdown deadline (a worker drains first).
  const config = loadConfig({ path: join(ROOT, 'infra/sluice.yaml'), env: {} });
  expect(seconds(compose.services.worker!.stop_grace_period)).toBeGreaterThanOrEqual(
    (config.worker.drainTimeoutMs + 5_000) / 1000,
  );
  for (const name of ['api', 'admin']) expect(seconds(compose.services[name]!.stop_grace_period)).toBeGreaterThan(10);
});

it('has a health check command that passes on a ready process and fails on one that is not', async () => {
  const script = compose.services.worker!.healthcheck!.test[3]!.replace('http://127.0.0.1:9465', health.url);
  // Not spawnSync: the server answering is in this process.
  const run = (): Promise<number | null> =>
    new Promise((resolve) => {
      const child = spawn(process.execPath, ['-e', script], { stdio: 'ignore', timeout: 10_000 });
      child.on('exit', (code) => resolve(code));
    });
  expect(await run(), 'not started yet: 503').toBe(1);
  health.started();
  expect(await run(), 'started, Redis answering').toBe(0);
  await redis.kill('SIGSTOP');
  try {
    expect(await run(), 'Redis silent').toBe(1);
  } finally {
    await redis.kill('SIGCONT');
  }
  health.drain();
  expect(await run(), 'draining').toBe(1);
});
