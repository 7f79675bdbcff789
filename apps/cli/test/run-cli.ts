import { run } from '../src/index.js';

/** What a `sluice …` run printed and returned. */
export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs `sluice …` through the same `run()` the process's main.ts calls, with `env` as its
 * environment (the process start is checked by the tests that spawn one).
 */
export async function runCli(env: NodeJS.ProcessEnv, ...args: string[]): Promise<CliResult> {
  let stdout = '';
  let stderr = '';
  const code = await run(args, {
    stdout: (text) => void (stdout += text),
    stderr: (text) => void (stderr += text),
    env,
    now: () => Date.now(),
  });
  return { code, stdout, stderr };
}
