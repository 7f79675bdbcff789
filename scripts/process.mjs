// One way to run a Sluice process, shared by `npm start` (scripts/start.mjs) and the tests
// (test/support/process.ts): spawn it, follow its output line by line, wait for its ready
// line, stop it with a signal and kill it if it does not stop in time. Plain JavaScript
// (typed by process.d.mts) so that both import it without a build.
import { spawn } from 'node:child_process';

/** How long {@link startProcess}'s `stop` waits by default before it kills. */
const STOP_TIMEOUT_MS = 15_000;

/**
 * Starts `command args` and follows its stdout and stderr. See process.d.mts for the options
 * and the handle it returns.
 */
export function startProcess(command, args, options = {}) {
  const { cwd, env, detached = false, log, keepOutput = false, tailLines = 20 } = options;
  const child = spawn(command, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'], detached });
  const listeners = new Set();
  const tail = [];
  let output = '';
  let running = true;
  const emit = (line) => {
    tail.push(line);
    if (tail.length > tailLines) tail.splice(0, tail.length - tailLines);
    for (const listener of listeners) listener(line);
  };
  const closed = new Promise((resolve) => {
    child.once('error', (error) => {
      emit(`cannot start ${command}: ${error.message}`);
      if (running) {
        running = false;
        resolve({ code: null, signal: null });
      }
    });
    child.once('close', (code, signal) => {
      running = false;
      resolve({ code, signal });
    });
  });
  for (const stream of [child.stdout, child.stderr]) {
    let partial = '';
    stream.on('data', (chunk) => {
      log?.write(chunk);
      const text = chunk.toString();
      if (keepOutput) output += text;
      const lines = (partial + text).split('\n');
      partial = lines.pop();
      for (const line of lines) emit(line);
    });
    stream.on('end', () => {
      if (partial) emit(partial);
    });
  }

  const proc = {
    child,
    closed,
    get running() {
      return running;
    },
    tail: () => [...tail],
    output: () => output,
    onLine(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    waitForLine(test, { timeoutMs } = {}) {
      return new Promise((resolve) => {
        let stopListening;
        const done = (result) => {
          clearTimeout(timer);
          stopListening();
          resolve(result);
        };
        stopListening = proc.onLine((line) => {
          if (test(line)) done({ line });
        });
        const timer =
          timeoutMs === undefined ? undefined : setTimeout(() => done({ line: undefined, why: 'timeout' }), timeoutMs);
        void closed.then(() => done({ line: undefined, why: 'closed' }));
      });
    },
    async stop({ signal = 'SIGTERM', timeoutMs = STOP_TIMEOUT_MS } = {}) {
      if (!running) return { ...(await closed), killed: false };
      child.kill(signal);
      let timer;
      const timedOut = new Promise((resolve) => {
        timer = setTimeout(() => resolve('timeout'), timeoutMs);
      });
      const result = await Promise.race([closed, timedOut]);
      clearTimeout(timer);
      if (result !== 'timeout') return { ...result, killed: false };
      child.kill('SIGKILL');
      return { ...(await closed), killed: true };
    },
  };
  return proc;
}
