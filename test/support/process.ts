import { spawn, type ChildProcess } from 'node:child_process';
import { resolve } from 'node:path';

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
export const fromSources = (app: string): string[] => ['--conditions=@sluice/source', '--import', 'tsx', `apps/${app}/src/main.ts`];

/**
 * Starts `node <args>` at the root and resolves once its output (stdout or stderr) contains
 * `ready`; rejects with everything it printed if it exits first.
 */
export function startProcess(name: string, args: readonly string[], env: NodeJS.ProcessEnv, ready: string): Promise<TestProcess> {
  const child = spawn(process.execPath, args, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  const proc: TestProcess = {
    name: `${name}[${child.pid}]`,
    child,
    output: () => out,
    async stop(signal = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill(signal);
        // A process that does not stop in time is a failure to see, not to wait out.
        const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
        void exited.finally(() => clearTimeout(timer));
      }
      return exited;
    },
  };
  return new Promise((resolveReady, reject) => {
    const onData = (chunk: Buffer): void => {
      out += chunk.toString();
      if (out.includes(ready)) resolveReady(proc);
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    void exited.then((code) => reject(new Error(`${name} exited with ${code} before it was ready:\n${out}`)));
  });
}
