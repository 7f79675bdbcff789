import { spawn, type ChildProcess } from 'node:child_process';
import { resolve } from 'node:path';
import { waitFor, type Fleet } from '../support/fleet.js';

const ROOT = resolve(import.meta.dirname, '../..');

/** Starts a TypeScript file of this folder as a process; resolves once it prints `"event":"ready"`. */
export function spawnTs(file: string, args: string[]): Promise<ChildProcess> {
  const child = spawn(
    process.execPath,
    ['--conditions=@sluice/source', '--import', 'tsx', resolve(import.meta.dirname, file), ...args],
    {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  return new Promise((ok, fail) => {
    child.stdout.on('data', (chunk: Buffer) => {
      if (chunk.toString().includes('"event":"ready"')) ok(child);
    });
    child.once('exit', (code) => fail(new Error(`${file} exited with ${code}`)));
  });
}

/** Stops processes started by {@link spawnTs}. */
export async function stopAll(children: ChildProcess[]): Promise<void> {
  await Promise.all(
    children.map(
      (c) =>
        new Promise((r) => {
          if (c.exitCode !== null) return r(null);
          c.once('exit', r);
          c.kill('SIGTERM');
        }),
    ),
  );
}

/** Sends `n` throw-away messages and waits for them, so the fleet's first measured second is not its start-up. */
export async function warmUp(fleet: Fleet, n = 20): Promise<void> {
  const before = fleet.sandbox.stats().accepted;
  await fleet.client.sendBulk(
    Array.from({ length: n }, (_, i) => ({
      from: 'bench@acme.test',
      to: `w${i}@warm.test`,
      subject: 'warm',
      text: 'up',
    })),
  );
  await waitFor(() => fleet.sandbox.stats().accepted >= before + n, 30_000, 'the warm-up sends');
  await sleep(1500); // buckets idle again
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Percentile of sorted numbers. */
export function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(sorted.length * p) - 1))] ?? 0;
}

/** Messages of a bulk send. */
export function bulk(n: number, domain: (i: number) => string, extra: Record<string, unknown> = {}) {
  return Array.from({ length: n }, (_, i) => ({
    from: 'bench@acme.test',
    to: `r${i}@${domain(i)}`,
    subject: 'bench',
    text: 'hello',
    ...extra,
  }));
}

/** `n` rounded to `digits` decimals, for bench-results.json. */
export function round(n: number, digits = 0): number {
  const f = 10 ** digits;
  return Math.round(n * f) / f;
}

/** A whole number with thousands separators, as the bench table prints it. */
export function fmt(n: number): string {
  return Math.round(n).toLocaleString('en-US');
}

/** One row of the bench table: figure, Sluice, baseline, ratio, target. */
export type Row = [string, string, string, string, string];
