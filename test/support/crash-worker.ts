// A worker that SIGKILLs itself at one step of a delivery, for test/faults/crash-steps.
// `SLUICE_CRASH_PLAN` is a JSON file `{ [messageId]: step }`; `SLUICE_CRASH_MARKS` a directory
// where each kill is claimed first (a file per message), so every message is killed once, at
// its step, by whichever worker gets there first, and its retry goes through. Otherwise it is
// apps/worker/src/main.ts.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { configAndLogger, runService } from '@sluice/core';
import { createWorker, type DeliveryStep, type OnStep } from '@sluice/dispatch';

const { config, logger } = configAndLogger('sluice-worker');
const plan = JSON.parse(readFileSync(process.env.SLUICE_CRASH_PLAN ?? '', 'utf8')) as Record<string, DeliveryStep>;
const marks = process.env.SLUICE_CRASH_MARKS ?? '';

/** Whether this process is the one to kill `id` (the claim is atomic across processes: `wx`). */
function claim(id: string): boolean {
  try {
    writeFileSync(join(marks, id), String(process.pid), { flag: 'wx' });
    return true;
  } catch {
    return false;
  }
}

const onStep: OnStep = (step, id) => {
  if (plan[id] === step && claim(id)) process.kill(process.pid, 'SIGKILL');
};

runService({
  name: 'worker',
  logger,
  async start() {
    if (config instanceof Error) throw config;
    const worker = createWorker({ config, logger, onStep });
    await worker.start();
    return { close: () => worker.close(), shutdownDeadlineMs: config.worker.drainTimeoutMs + 5_000 };
  },
});
