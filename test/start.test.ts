import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startProcess } from '../scripts/process.mjs';
import { ROOT } from './support/process.js';
import { childEnv, envPath } from './support/env.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A folder for the PATH with executables of these names and scripts. */
function binaries(scripts: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-start-'));
  dirs.push(dir);
  for (const [name, script] of Object.entries(scripts)) {
    writeFileSync(join(dir, name), script);
    chmodSync(join(dir, name), 0o755);
  }
  return dir;
}

describe('npm start (scripts/start.mjs)', () => {
  it('stops cleanly on Ctrl-C while Redis starts, after the build', async () => {
    const bin = binaries({
      // Install and build: done at once.
      pnpm: '#!/bin/sh\nexit 0\n',
      // The private Redis: Ctrl-C reaches start.mjs (its parent) as it starts; never ready.
      'redis-server': '#!/bin/sh\nkill -INT $PPID\nexec sleep 30\n',
    });
    const env = childEnv({ PATH: `${bin}${delimiter}${envPath()}`, REDIS_URL: '' });
    const start = startProcess(process.execPath, ['scripts/start.mjs'], { cwd: ROOT, env, keepOutput: true });
    const { code, signal } = await start.closed;
    const output = start.output();
    expect(output).not.toContain('ReferenceError');
    expect(output).toContain('SIGINT: stopping');
    expect(output).toMatch(/sluice: stopped\n/);
    expect({ code, signal }).toEqual({ code: 0, signal: null });
  });
});
