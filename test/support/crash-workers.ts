import type { Fleet, FleetProcess } from './fleet.js';

// The crash workers of the fault cells (test/faults/crash-steps, crash-batch): workers that
// SIGKILL themselves at their plan's step (test/support/crash-worker.ts), started again as they
// die, so the cell keeps a few alive until every planned kill has happened.

/** A pool of crash workers under one plan. */
export interface CrashWorkers {
  /** Starts workers until `count` are running or starting. */
  keep(count: number): void;
  /** Processes that ended (killed by their plan, or failed to start). */
  readonly exits: number;
  /** Waits for the starts in hand, then stops the live ones (SIGTERM). */
  stop(): Promise<void>;
}

/** Starts no worker yet: `keep` does. `env` carries the plan (`SLUICE_CRASH_PLAN`, `SLUICE_CRASH_MARKS`). */
export function crashWorkers(fleet: () => Fleet, env: Record<string, string>): CrashWorkers {
  const alive = new Set<FleetProcess>();
  const starting: Promise<void>[] = [];
  let running = 0;
  let exits = 0;
  const gone = (): void => {
    running -= 1;
    exits += 1;
  };
  // In the background: a worker takes its first message as it starts, and may die of it
  // before it says it is ready (then its mark counts the kill).
  const start = (): void => {
    running += 1;
    starting.push(
      fleet()
        .startWorker({ entry: 'crash-worker', env })
        .then((p) => {
          if (p.child.exitCode !== null || p.child.signalCode !== null) return gone();
          alive.add(p);
          p.child.once('exit', () => {
            alive.delete(p);
            gone();
          });
        }, gone),
    );
  };
  return {
    keep(count) {
      while (running < count) start();
    },
    get exits() {
      return exits;
    },
    async stop() {
      await Promise.all(starting);
      await Promise.all([...alive].map((p) => p.stop('SIGTERM')));
    },
  };
}
