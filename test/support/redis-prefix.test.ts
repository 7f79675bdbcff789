import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { ROOT } from './process.js';
import { listClients, useRedisPrefix } from './redis-prefix.js';

interface Report {
  testResults: { message: string; assertionResults: { title: string; status: string; failureMessages: string[] }[] }[];
}

/** Runs the leaking fixture in a vitest of its own and reads its JSON report. */
async function runFixture(): Promise<Report> {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-leaks-'));
  try {
    const out = join(dir, 'report.json');
    const args = [
      join(ROOT, 'node_modules/vitest/vitest.mjs'),
      'run',
      '--config',
      'test/support/fixtures/leaks.config.ts',
      '--reporter=json',
      `--outputFile=${out}`,
    ];
    const child = spawn(process.execPath, args, { cwd: ROOT, stdio: 'ignore' });
    await new Promise((resolve, reject) => {
      child.once('error', reject);
      child.once('exit', resolve);
    });
    return JSON.parse(readFileSync(out, 'utf8')) as Report;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('useRedisPrefix', () => {
  const r = useRedisPrefix();
  let previous: string | undefined;

  it('gives each test a prefix on a Redis of the file, with the helper as its only client', async () => {
    expect(r.keys.prefix).toBe(r.prefix);
    expect((await listClients(r.redis)).map((c) => c.name)).toEqual(['sluice-test-helper']);
    await r.redis.set(r.keys.message('x'), '1');
    await r.redis.hset(r.keys.adjustments(), 'f', '1');
    previous = r.prefix;
  });

  it("deletes the previous test's keys and gives a new prefix", async () => {
    expect(previous).toBeDefined();
    expect(r.prefix).not.toBe(previous);
    expect(await r.redis.keys(`*${previous}*`)).toEqual([]);
  });

  it('counts a connection the test closes as closed', async () => {
    const other = new Redis(r.url);
    await other.ping();
    await other.quit();
  });

  it('fails a test that leaves an ioredis, a Queue or a Worker open, and a file that leaves one past afterAll', async () => {
    const report = await runFixture();
    const file = report.testResults[0];
    const result = (title: string) => file?.assertionResults.find((a) => a.title === title);
    expect(result('leaves an ioredis connection open')?.status).toBe('failed');
    expect(result('leaves an ioredis connection open')?.failureMessages.join()).toMatch(
      /left 1 Redis connection\(s\) open:\n.*name=leaked-ioredis cmd=ping/,
    );
    expect(result('leaves a Queue open')?.status).toBe('failed');
    expect(result('leaves a Queue open')?.failureMessages.join()).toMatch(/left 1 Redis connection\(s\) open/);
    expect(result('leaves a Worker open')?.status).toBe('failed');
    expect(result('leaves a Worker open')?.failureMessages.join()).toMatch(
      /left 2 Redis connection\(s\) open:[\s\S]*a BullMQ Worker of queue 'leaky'/,
    );
    // A leak fails its own test only: the next test is not blamed for it.
    expect(result('closes everything it opens')?.status).toBe('passed');
    expect(result('may use it in its tests')?.status).toBe('passed');
    expect(file?.message).toMatch(/the file left 1 Redis connection\(s\) open:\n.*name=kept-by-before-all/);
  });
});
