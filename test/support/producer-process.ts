import { join } from 'node:path';
import { startProcess, type StartedProcess } from '../../scripts/process.mjs';
import { childEnv } from './env.js';
import type { Fleet } from './fleet.js';
import type { ProducerTask } from './inject-producer.js';
import { ROOT } from './process.js';

/** What the producer printed when it finished. */
export interface ProducerDone {
  accepted: number;
  startedAt: number;
  endedAt: number;
  /** Its RSS high-water mark, bytes (VmHWM, or the 100 ms samples' peak). */
  rssPeak: number;
}

/** A running inject-producer (test/support/inject-producer.ts, bundled with the fleet's apps). */
export interface Producer {
  readonly process: StartedProcess;
  /** The cursor position it started from (read from `campaigns.status`). */
  readonly from: number;
  /** Epoch ms just before its `inject` (or `sendBulk`) call. */
  readonly startedAt: number;
  /** Epoch ms of its launch request, when it launched the campaign (`task.launch`). */
  readonly launchedAt: number | undefined;
  /** Resolves with its figures when it finishes, or with `undefined` if it ended another way (killed). */
  readonly done: Promise<ProducerDone | undefined>;
}

/**
 * Starts the fleet's bundled producer on `task` (the fleet's Redis and prefix) and resolves
 * once it has read the cursor and is about to inject.
 */
export async function startProducer(fleet: Fleet, task: Omit<ProducerTask, 'prefix'>): Promise<Producer> {
  // A plain `node`, as a backend runs its producer: no flags (`--enable-source-maps` would keep
  // every loaded package's source map in the heap it measures).
  const proc = startProcess(process.execPath, [join(fleet.apps, 'inject-producer.mjs')], {
    cwd: ROOT,
    env: childEnv({ SLUICE_INJECT_PRODUCER: JSON.stringify({ ...task, prefix: fleet.prefix }) }),
    tailLines: 40,
  });
  const events = new Map<string, Record<string, unknown>>();
  proc.onLine((line) => {
    if (!line.startsWith('{"event":')) return;
    const parsed = JSON.parse(line) as { event: string } & Record<string, unknown>;
    events.set(parsed.event, parsed);
  });
  const started = await proc.waitForLine((line) => line.startsWith('{"event":"start"'));
  if (started.line === undefined) {
    await proc.closed;
    throw new Error(`the producer ended before it started:\n${proc.tail().join('\n')}`);
  }
  const start = JSON.parse(started.line) as { at: number; from: number; launchedAt?: number };
  const done = proc.closed.then(() => events.get('done') as ProducerDone | undefined);
  return { process: proc, from: start.from, startedAt: start.at, launchedAt: start.launchedAt, done };
}

/** Waits for a producer that should finish on its own; throws with its last lines if it did not. */
export async function producerResult(producer: Producer): Promise<ProducerDone> {
  const done = await producer.done;
  if (!done) throw new Error(`the producer failed:\n${producer.process.tail().join('\n')}`);
  return done;
}
