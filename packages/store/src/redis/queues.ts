import { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import {
  DISPATCH_JOB_OPTIONS,
  INTAKE_JOB_OPTIONS,
  PRIORITY_CLASSES,
  QUEUE_OPTIONS,
  type Keys,
  type PriorityClass,
} from '@sluice/core';

/** Options of {@link createQueues}. */
export interface QueuesOptions {
  /** A connection of the caller's; not closed here. */
  redis: Redis;
  keys: Keys;
}

/**
 * Every BullMQ `Queue` handle a process uses, made once each with the same options
 * (`QUEUE_OPTIONS`: each handle writes them to the queue's meta) and the job defaults of
 * its kind, on one connection, and closed together.
 */
export interface Queues {
  /** A campaign's intake queue (`campaign-<id>`). */
  campaign(campaignId: string): Queue;
  /** Transactional intake of one class (`intake-<class>`). */
  intake(priority: PriorityClass): Queue;
  /** Where a message goes back to admission: its campaign's queue, else its class's intake. */
  intakeOf(m: { campaignId?: string | undefined; priority: PriorityClass }): Queue;
  /** Admitted work of one class (`dispatch-<class>`). */
  dispatch(priority: PriorityClass): Queue;
  /** A queue by its name (one of the above; Bull Board and the status list them by name). */
  named(name: string): Queue;
  /** Forgets (and closes) a handle, e.g. once a campaign is over. */
  drop(name: string): Promise<void>;
  /** Every handle made so far. */
  all(): Queue[];
  close(): Promise<void>;
}

/** Creates the queue handles of one process. */
export function createQueues(options: QueuesOptions): Queues {
  const { redis, keys } = options;
  const handles = new Map<string, Queue>();
  const dispatchNames = new Set<string>(PRIORITY_CLASSES.map((p) => keys.dispatchQueue(p)));
  const named = (name: string): Queue => {
    let q = handles.get(name);
    if (!q) {
      const defaultJobOptions = dispatchNames.has(name) ? { ...DISPATCH_JOB_OPTIONS } : { ...INTAKE_JOB_OPTIONS };
      q = new Queue(name, { ...QUEUE_OPTIONS, connection: redis, prefix: keys.prefix, defaultJobOptions });
      // A Queue re-emits its connection's errors, and with no listener BullMQ prints each
      // one with console.error (a multi-line dump per retry during an outage). The
      // connection's own listener reports them (connectRedis), and a command that fails
      // rejects its caller.
      q.on('error', () => undefined);
      handles.set(name, q);
    }
    return q;
  };
  return {
    campaign: (id) => named(keys.campaignQueue(id)),
    intake: (p) => named(keys.intakeQueue(p)),
    intakeOf: (m) =>
      named(m.campaignId !== undefined ? keys.campaignQueue(m.campaignId) : keys.intakeQueue(m.priority)),
    dispatch: (p) => named(keys.dispatchQueue(p)),
    named,
    async drop(name) {
      const q = handles.get(name);
      handles.delete(name);
      await q?.close();
    },
    all: () => [...handles.values()],
    async close() {
      const all = [...handles.values()];
      handles.clear();
      await Promise.all(all.map((q) => q.close()));
    },
  };
}
