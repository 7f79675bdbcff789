import type { ChildProcess } from 'node:child_process';
import { resolve } from 'node:path';
import { startProcess as spawnProcess } from '../../scripts/process.mjs';

/** The repository's root: where every test process starts. */
export const ROOT = resolve(import.meta.dirname, '../..');

/** A Sluice process started by a test. */
export interface TestProcess {
  readonly name: string;
  readonly child: ChildProcess;
  /** Everything it printed so far. */
  output(): string;
  /** Sends a signal and waits for the exit; resolves the exit code (null when killed). */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/** Node's arguments to run an app from its TypeScript sources (as `pnpm dev` does). */
export const fromSources = (app: string): string[] => [
  '--conditions=@sluice/source',
  '--import',
  'tsx',
  `apps/${app}/src/main.ts`,
];

/**
 * Starts `node <args>` at the root (with the helper `npm start` uses) and resolves once a line
 * of its output (stdout or stderr) contains `ready`; rejects with everything it printed if it
 * exits first.
 */
export async function startProcess(
  name: string,
  args: readonly string[],
  env: NodeJS.ProcessEnv,
  ready: string,
): Promise<TestProcess> {
  const proc = spawnProcess(process.execPath, args, { cwd: ROOT, env, keepOutput: true });
  const testProcess: TestProcess = {
    name: `${name}[${proc.child.pid}]`,
    child: proc.child,
    output: () => proc.output(),
    // A process that does not stop in time is a failure to see, not to wait out: killed after 15 s.
    stop: async (signal = 'SIGTERM') => (await proc.stop({ signal, timeoutMs: 15_000 })).code,
  };
  // No timeout of ours: the test's own says how long is too long.
  const started = await proc.waitForLine((line) => line.includes(ready));
  if (started.line === undefined) {
    const { code } = await proc.closed;
    throw new Error(`${name} exited with ${code} before it was ready:\n${proc.output()}`);
  }
  return testProcess;
}
