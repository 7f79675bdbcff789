import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, inject, it } from 'vitest';
import { createClient } from '@sluice/client';
import { createSandbox } from '@sluice/sandbox';
import { startProcess } from '../scripts/process.mjs';
import { childEnv } from './support/env.js';
import { waitFor } from './support/fleet.js';
import { logProblems } from './support/json-lines.js';
import { ROOT, fromSources } from './support/process.js';
import { freePort, startRedisServer, type RedisServer } from './support/redis-server.js';

type Proc = ReturnType<typeof startProcess>;

/** Every line a process printed, stdout and stderr, parsed: a line that is not JSON fails here. */
function lines(name: string, proc: Proc): Record<string, unknown>[] {
  return proc
    .output()
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => {
      try {
        return JSON.parse(line) as Record<string, unknown>;
      } catch {
        throw new Error(`${name} printed a line that is not JSON: ${line}\n--- all of it:\n${proc.output()}`);
      }
    });
}

const count = (name: string, proc: Proc, event: string): number =>
  lines(name, proc).filter((l) => l.event === event).length;

/** A process's `/healthz` and `/readyz`: their status codes and `/readyz`'s checks. */
async function probe(port: number): Promise<{ live: number; ready: number; checks: Record<string, string> }> {
  const live = await fetch(`http://127.0.0.1:${port}/healthz`);
  const ready = await fetch(`http://127.0.0.1:${port}/readyz`);
  const body = (await ready.json()) as { checks: Record<string, string> };
  await live.body?.cancel();
  return { live: live.status, ready: ready.status, checks: body.checks };
}

it('every process waits for Redis saying so once, says once when it is back and when it is lost, its /readyz with it, and prints only JSON', async () => {
  const redisPort = await freePort();
  const url = `redis://127.0.0.1:${redisPort}`;
  const prefix = `t${randomUUID().slice(0, 8)}`;
  const dir = mkdtempSync(join(tmpdir(), 'sluice-redis-wait-'));
  const sandbox = await createSandbox({ scenario: {} });
  const adminPort = await freePort();
  const configPath = join(dir, 'sluice.yaml');
  const config = {
    redis: { url, prefix },
    sandbox: { url: sandbox.url, smtpPort: sandbox.smtpPort },
    worker: { lockDurationMs: 4_000, stalledIntervalMs: 1_000 },
    api: { port: await freePort() },
    admin: { port: adminPort, devNoAuth: true },
  };
  writeFileSync(configPath, JSON.stringify(config)); // JSON is YAML
  const env = childEnv({ SLUICE_CONFIG: configPath, REDIS_URL: url });
  const apps = inject('apps');
  const procs = new Map<string, Proc>();
  let redis: RedisServer | undefined;
  const client = createClient({ redis: url, prefix, fleetCheck: 'off' });
  const send = (i: number) =>
    client.send({ from: 'Acme <news@acme.test>', to: `user${i}@example.test`, subject: `hi ${i}`, text: 'hi' });
  try {
    // All four at once, so the wait is paid once; the scheduler also serves /metrics (one
    // more connection of its own).
    const starts: [string, string[], NodeJS.ProcessEnv][] = [
      ['scheduler', [join(apps, 'scheduler.mjs')], { ...env, SLUICE_METRICS_PORT: String(await freePort()) }],
      ['worker', [join(apps, 'worker.mjs')], env],
      ['api', fromSources('api'), env],
      ['admin', fromSources('admin'), env],
    ];
    // Each its own health port (SLUICE_HEALTH_PORT).
    const healthPorts = new Map<string, number>();
    for (const [name, args, e] of starts) {
      healthPorts.set(name, await freePort());
      const withHealth = { ...e, SLUICE_HEALTH_PORT: String(healthPorts.get(name)) };
      procs.set(name, startProcess(process.execPath, args, { cwd: ROOT, env: withHealth, keepOutput: true }));
    }
    /** Waits until every process's probe answers as `expected` says, and returns the answers. */
    const probesUntil = async (what: string, expected: (p: Awaited<ReturnType<typeof probe>>) => boolean) => {
      const answers = new Map<string, Awaited<ReturnType<typeof probe>>>();
      await waitFor(
        async () => {
          for (const [name, port] of healthPorts) answers.set(name, await probe(port).catch(() => undefined as never));
          return [...answers.values()].every((a) => a !== undefined && expected(a)) ? true : null;
        },
        30_000,
        what,
      );
      return answers;
    };
    const all = [...procs];
    const everyOne = (what: string, test: (name: string, p: Proc) => boolean, timeoutMs = 60_000) =>
      waitFor(() => all.every(([name, p]) => test(name, p)), timeoutMs, what);

    await everyOne('a redis_waiting line from each', (name, p) => count(name, p, 'redis_waiting') > 0);
    // Long enough for every connection to fail again a few times (ioredis retries within 50-200 ms).
    await new Promise((r) => setTimeout(r, 2_000));
    for (const [name, p] of all) {
      expect(p.running, `${name} is alive while it waits`).toBe(true);
      expect(count(name, p, 'redis_waiting'), name).toBe(1);
      expect(count(name, p, 'ready'), `${name} is not ready without Redis`).toBe(0);
      const waiting = lines(name, p).find((l) => l.event === 'redis_waiting')!;
      expect(waiting.msg).toBe(`waiting for Redis at ${url}`);
    }
    // Live while waiting, not ready, and saying why.
    for (const [name, a] of await probesUntil('live, not ready, without Redis', (a) => a.live === 200)) {
      expect(a.ready, name).toBe(503);
      expect(a.checks.started, name).toBe('starting');
      expect(a.checks['redis.queues'], name).not.toBe('ok');
    }

    redis = await startRedisServer({ port: redisPort, dir });
    await everyOne('ready once Redis is there', (name, p) => count(name, p, 'ready') === 1);
    for (const [name, p] of all) expect(count(name, p, 'redis_back'), name).toBe(1);
    await probesUntil('every process ready once Redis answers', (a) => a.ready === 200);
    await send(0);
    await waitFor(() => sandbox.accepted().length >= 1, 30_000, 'the first message at the sandbox');
    expect((await fetch(`http://127.0.0.1:${adminPort}/api/status`)).status).toBe(200);

    // An outage of a few seconds while every process runs.
    await redis.stop();
    await everyOne('a redis_unavailable line from each', (name, p) => count(name, p, 'redis_unavailable') > 0);
    // A request meanwhile fails, and is no line of its own: the outage's line covers it.
    expect((await fetch(`http://127.0.0.1:${adminPort}/api/status`)).status).toBe(500);
    // Still live; not ready, naming Redis.
    const down = await probesUntil('not ready while Redis is away', (a) => a.ready === 503 && a.live === 200);
    for (const [name, a] of down) {
      expect(a.checks['redis.queues'], name).toMatch(/unreachable|no answer/);
      expect(a.checks.started, name).toBe('ok');
    }
    await new Promise((r) => setTimeout(r, 2_000));
    redis = await startRedisServer({ port: redisPort, dir });
    await everyOne('a second redis_back line from each', (name, p) => count(name, p, 'redis_back') === 2);
    await probesUntil('ready again once Redis is back', (a) => a.ready === 200);
    await send(1);
    await waitFor(() => sandbox.accepted().length >= 2, 30_000, 'the second message at the sandbox');
    expect((await fetch(`http://127.0.0.1:${adminPort}/api/status`)).status).toBe(200);

    for (const [name, p] of all) {
      expect(p.running, `${name} is alive`).toBe(true);
      const events = lines(name, p)
        .map((l) => l.event)
        .filter((e) => typeof e === 'string' && e.startsWith('redis_'));
      expect(events, name).toEqual(['redis_waiting', 'redis_back', 'redis_unavailable', 'redis_back']);
      const back = lines(name, p).filter((l) => l.event === 'redis_back');
      expect(back.map((l) => l.atStart)).toEqual([true, false]);
      expect(back[1]!.downMs, `${name}: the outage's length`).toBeGreaterThan(0);
      const errors = lines(name, p).filter((l) => Number(l.level) >= 50 && l.event !== 'redis_unavailable');
      expect(errors, `${name}: no error line but the outage's`).toEqual([]);
    }
    for (const [name, p] of all) expect((await p.stop()).code, `${name} stops cleanly`).toBe(0);
    // Nothing unstructured on the way out either, and no line that repeats a key (JSON.parse
    // would keep the last and hide the first).
    for (const [name, p] of all) {
      lines(name, p);
      expect(logProblems(p.output()), name).toEqual([]);
    }
  } finally {
    await Promise.all([...procs.values()].map((p) => p.stop({ signal: 'SIGKILL' })));
    await client.close();
    await sandbox.close();
    await redis?.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});
