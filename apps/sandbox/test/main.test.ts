import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { afterEach, describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../../..');
const children: ChildProcess[] = [];
const dirs: string[] = [];

afterEach(async () => {
  for (const child of children.splice(0)) {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGKILL');
      await exited;
    }
  }
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

function start(args: string[]): { child: ChildProcess; exit: Promise<number | null>; stderr: () => string } {
  const child = spawn(
    process.execPath,
    ['--conditions=@sluice/source', '--import', 'tsx', 'apps/sandbox/src/main.ts', ...args],
    {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  children.push(child);
  let err = '';
  child.stderr?.on('data', (chunk: Buffer) => (err += chunk.toString()));
  const exit = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  return { child, exit, stderr: () => err };
}

async function firstLine(child: ChildProcess): Promise<string> {
  const lines = createInterface({ input: child.stdout! });
  try {
    for await (const line of lines) return line;
  } finally {
    lines.close();
  }
  throw new Error('process ended without printing a line');
}

async function tempFile(name: string, text: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'sandbox-main-'));
  dirs.push(dir);
  const path = join(dir, name);
  await writeFile(path, text);
  return path;
}

describe('main', () => {
  it('prints the listening line, serves, and exits 0 on SIGTERM', async () => {
    const scenario = await tempFile('s.yaml', 'account:\n  maxSendRate: 7\n');
    const { child, exit } = start(['--port', '0', '--smtp-port', '0', '--scenario', scenario]);
    const line = await firstLine(child);
    // scripts/start.mjs finds the line by this text, then reads `url`.
    expect(line).toContain('"event":"listening"');
    const parsed = JSON.parse(line) as { event: string; url: string; smtpPort: number };
    expect(parsed).toEqual({
      event: 'listening',
      url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+$/) as string,
      smtpPort: expect.any(Number) as number,
    });
    expect(parsed.smtpPort).toBeGreaterThan(0);

    const socket = connect(parsed.smtpPort, '127.0.0.1');
    const [greeting] = (await once(socket, 'data')) as [Buffer];
    socket.destroy();
    expect(greeting.toString()).toMatch(/^220 /);

    const health = await fetch(`${parsed.url}/_sandbox/health`);
    expect(await health.json()).toEqual({ ok: true });
    const current = (await (await fetch(`${parsed.url}/_sandbox/scenario`)).json()) as {
      account: { maxSendRate: number };
    };
    expect(current.account.maxSendRate).toBe(7);

    child.kill('SIGTERM');
    expect(await exit).toBe(0);
  });

  it('listens on a free SMTP port when the default 2525 is taken and --smtp-port is not given', async () => {
    // Taken by this test, or already by someone else: either way the sandbox must still start.
    const blocker = createServer();
    await new Promise<void>((resolve) => {
      blocker.once('error', () => resolve());
      blocker.listen(2525, '127.0.0.1', () => resolve());
    });
    try {
      const { child } = start(['--port', '0']);
      const parsed = JSON.parse(await firstLine(child)) as { smtpPort: number };
      expect(parsed.smtpPort).not.toBe(2525);
      expect(parsed.smtpPort).toBeGreaterThan(0);
    } finally {
      await new Promise((resolve) => blocker.close(resolve));
    }
  });

  it('keeps counts only with --keep counts, and exits 1 on another --keep', async () => {
    const { child, exit } = start(['--port', '0', '--smtp-port', '0', '--keep', 'counts']);
    const { url } = JSON.parse(await firstLine(child)) as { url: string };
    expect((await fetch(`${url}/_sandbox/accepted`)).status).toBe(409);
    expect(await (await fetch(`${url}/_sandbox/stats`)).json()).toMatchObject({ accepted: 0 });
    child.kill('SIGTERM');
    expect(await exit).toBe(0);

    const bad = start(['--port', '0', '--keep', 'all']);
    expect(await bad.exit).toBe(1);
    expect(bad.stderr()).toContain('--keep must be messages or counts, got all');
  });

  it('exits 1 on a bad --smtp-port', async () => {
    const { exit, stderr } = start(['--port', '0', '--smtp-port', 'smtp']);
    expect(await exit).toBe(1);
    expect(stderr()).toContain('--smtp-port must be an integer 0..65535, got smtp');
  });

  it('exits 1 naming the field path when the scenario file is invalid', async () => {
    const scenario = await tempFile('bad.yaml', 'domains:\n  example.com:\n    rate: -3\n');
    const { exit, stderr } = start(['--port', '0', '--scenario', scenario]);
    expect(await exit).toBe(1);
    expect(stderr()).toContain('domains.example.com.rate');
  });
});
