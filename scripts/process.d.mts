import type { ChildProcess } from 'node:child_process';
import type { Writable } from 'node:stream';

/** How a process ended: its exit code, or the signal that ended it (both null: never started). */
export interface ProcessExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** Options of {@link startProcess}. */
export interface StartProcessOptions {
  cwd?: string | undefined;
  env?: NodeJS.ProcessEnv | undefined;
  /** A process group of its own, so a Ctrl-C in the terminal does not reach it. @defaultValue false */
  detached?: boolean | undefined;
  /** Where everything it prints is copied, as it comes. */
  log?: Writable | undefined;
  /** Keep everything it printed for {@link StartedProcess.output} (tests; not for long runs). @defaultValue false */
  keepOutput?: boolean | undefined;
  /** How many of its last lines {@link StartedProcess.tail} keeps. @defaultValue 20 */
  tailLines?: number | undefined;
}

/** A process started by {@link startProcess}. */
export interface StartedProcess {
  readonly child: ChildProcess;
  /** Resolves once it has ended and its output is read. */
  readonly closed: Promise<ProcessExit>;
  readonly running: boolean;
  /** Its last lines (stdout and stderr as they came). */
  tail(): string[];
  /** Everything it printed, with `keepOutput`; else empty. */
  output(): string;
  /** Calls `listener` with each line it prints from now on; returns what stops that. */
  onLine(listener: (line: string) => void): () => void;
  /**
   * The first line from now on that passes `test`, or no line and why: it ended first, or
   * `timeoutMs` passed.
   * @defaultValue timeoutMs none: until a line passes or it ends
   */
  waitForLine(
    test: (line: string) => boolean,
    options?: { timeoutMs?: number | undefined },
  ): Promise<{ line: string; why?: undefined } | { line: undefined; why: 'closed' | 'timeout' }>;
  /**
   * Sends `signal` (unless it has ended already) and waits for the end; kills it (SIGKILL)
   * after `timeoutMs`, and says so with `killed`.
   * @defaultValue signal SIGTERM, timeoutMs 15 s
   */
  stop(options?: { signal?: NodeJS.Signals; timeoutMs?: number }): Promise<ProcessExit & { killed: boolean }>;
}

/** Starts `command args` and follows its stdout and stderr line by line. */
export function startProcess(command: string, args: readonly string[], options?: StartProcessOptions): StartedProcess;
