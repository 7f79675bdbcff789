import { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import {
  DISPATCH_JOB_OPTIONS,
  INTAKE_JOB_OPTIONS,
  dispatchPartitionOf,
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
  /** `redis.dispatchPartitions`: each class's dispatch queue is this many. @defaultValue `1` */
  partitions?: number | undefined;
}

/**
 * Every BullMQ `Queue` handle a process uses, made once each with the same options
 * (`QUEUE_OPTIONS`: each handle writes them to the queue's meta) and the job defaults of
 * its kind, on one connection, and closed together.
 */
export interface Queues {
  /** A campaign's intake queue (`{campaign-<id>}`: its own hash tag, the campaign's). */
  campaign(campaignId: string): Queue;
  /** Transactional intake of one class (`{intake-<class>}`: its own hash tag). */
  intake(priority: PriorityClass): Queue;
  /** Where a message goes back to admission: its campaign's queue, else its class's intake. */
  intakeOf(m: { campaignId?: string | undefined; priority: PriorityClass }): Queue;
  /** Admitted work of one class in one partition (`dispatch-<class>-{<tag>}`). @defaultValue partition `0` */
  dispatch(priority: PriorityClass, partition?: number): Queue;
  /** The dispatch queue of a message: its class's, in the partition its id picks. */
  dispatchOf(m: { id: string; priority: PriorityClass }): Queue;
  /** Every partition of a class's dispatch queue (`partitions` of them). */
  dispatchAll(priority: PriorityClass): Queue[];
  /**
   * Every dispatch queue of a class that exists (its meta key is there), whatever `partitions`
   * says: for a caller without the fleet's config (a backend's cancel), and for a worker, which
   * drains the queues of a former `redis.dispatchPartitions` too.
   */
  dispatchInUse(priority: PriorityClass): Promise<Queue[]>;
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
  const partitions = options.partitions ?? 1;
  const handles = new Map<string, Queue>();
  const mine = Array.from({ length: partitions }, (_, i) => i);
  const dispatchNames = new Set<string>(PRIORITY_CLASSES.flatMap((p) => keys.dispatchQueues(p)));
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
    dispatch: (p, partition = 0) => named(keys.dispatchQueue(p, partition, partitions)),
    dispatchOf: (m) => named(keys.dispatchQueue(m.priority, dispatchPartitionOf(m.id, partitions), partitions)),
    dispatchAll: (p) => mine.map((i) => named(keys.dispatchQueue(p, i, partitions))),
    async dispatchInUse(p) {
      // The meta key's name, as BullMQ builds it (`<prefix>:<queue>:meta`), without a handle
      // (a handle writes the meta of a queue that never was).
      const names = keys.dispatchQueues(p);
      const found = await Promise.all(names.map((name) => redis.exists(`${keys.prefix}:${name}:meta`)));
      return names.filter((_, i) => found[i] === 1).map(named);
    },
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
