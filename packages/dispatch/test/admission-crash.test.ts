import { Command, Redis } from 'ioredis';
import { expect, it } from 'vitest';
import { jobIdOf } from '@sluice/core';
import { createAdmission, createOrganisations, type Admission } from '@sluice/dispatch';
import { createQueues, createStore } from '@sluice/store';
import { useRedisPrefix } from '../../../test/support/redis-prefix.js';
import { useRig, type Rig } from './admission-setup.js';

// A scheduler SIGKILLed in the middle of admitting a message: whatever reached Redis stays,
// nothing after it goes out, and the intake job (its lock lost) runs again on a live
// scheduler. The message must still go out, exactly once: admission writes no record (the
// worker's mark does), so a rerun admits it again and its dispatch job, once there, is not
// added twice (same job id).
const r = useRedisPrefix();
const rig = useRig(r);

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * A scheduler's connection that can die: once `die(n)` is called, it sends `n` more commands
 * and then nothing (their callers wait for ever, as a dead process's would). Real Redis, real
 * BullMQ and store: only the process's end is simulated.
 */
function mortalScheduler(test: Rig): {
  admission: Admission;
  sent: Promise<unknown>[];
  blocked: () => number;
  /** Resolves once Redis has run every command sent so far (a PING behind them answered). */
  flushed: () => Promise<unknown>;
  die: (n: number) => void;
  /** Its end: the connection closes (Redis drops what it had half sent). */
  close: () => void;
} {
  const redis = new Redis(r.url);
  const sent: Promise<unknown>[] = [];
  let limit = Infinity;
  let blocked = 0;
  const original = redis.sendCommand.bind(redis);
  const send = (command: Command, stream?: never) => original(command, stream) as Promise<unknown>;
  // A pipeline's (or MULTI's) commands come with its `stream` and go out in one write: they
  // count as one step, whole or not at all (they are queued in one tick, so `limit` cannot
  // be reached half-way).
  redis.sendCommand = (command: Command, stream?: never) => {
    if (sent.length >= limit) {
      blocked++;
      return new Promise(() => undefined);
    }
    const reply = send(command, stream);
    if (stream === undefined) sent.push(reply.catch(() => undefined));
    return reply;
  };
  const { config, limiter, adjustments, warmup, keys } = test;
  const organisations = createOrganisations({ config, logger: { warn: () => undefined } });
  const admission = createAdmission({
    config,
    store: createStore({ redis, keys }),
    limiter,
    adjustments,
    warmup,
    organisations,
    queues: createQueues({ redis, keys }),
    redis,
    keys,
    clock: test.now,
    random: () => 0,
  });
  return {
    admission,
    sent,
    blocked: () => blocked,
    flushed: () => send(new Command('ping', [])),
    die: (n) => (limit = sent.length + n),
    close: () => {
      organisations.close();
      redis.disconnect();
    },
  };
}

it('dispatches a message whose scheduler died at any command of its admission, once its intake job runs again', async () => {
  const { admission, queues, message, record } = rig();
  // How many commands an admission sends on the scheduler's connection (the limiter's are
  // on the rig's own): measured on a warmed-up scheduler.
  const probe = mortalScheduler(rig());
  const mortals = [probe];
  try {
    await probe.admission.admit(message());
    const before = probe.sent.length;
    expect(await probe.admission.admit(message())).toMatchObject({ kind: 'dispatched' });
    const commands = probe.sent.length - before;
    expect(commands).toBeGreaterThan(2);

    for (let n = 0; n < commands; n++) {
      await sleep(150); // the receiver's bucket refills: every admission here is granted
      const scheduler = mortalScheduler(rig());
      mortals.push(scheduler);
      await scheduler.admission.admit(message()); // handles made and scripts loaded
      const m = message();
      scheduler.die(n);
      void scheduler.admission.admit(m);
      // Dead once it tried to send past its end; what it had sent has reached Redis.
      while (scheduler.blocked() === 0) await sleep(5);
      await scheduler.flushed();
      await sleep(20);

      // BullMQ gives the intake job to a live scheduler.
      const again = await admission.admit(m);
      const job = await queues.dispatch(m.priority).getJob(jobIdOf(m));
      const { state } = await record(m.id);
      // `n`: the commands that reached Redis before the scheduler died.
      expect({ n, rerun: again.kind, state, dispatchJob: job !== undefined }).toMatchObject({
        n,
        state: 'queued',
        dispatchJob: true,
      });
      // And once its job is there, another run of the intake job adds none: one dispatch.
      await admission.admit(m);
      const jobs = await queues.dispatch(m.priority).getJobs(['wait', 'delayed', 'prioritized', 'active']);
      expect(jobs.filter((j) => j.data.id === m.id)).toHaveLength(1);
    }
  } finally {
    for (const s of mortals) s.close();
  }
}, 20_000);
