import type { Redis } from 'ioredis';
import type { Keys } from '@sluice/core';
import { createOutcomes, type Outcomes } from '@sluice/store';
import { createGuard } from './deadline.js';

/**
 * The outcome stream, as a backend consumes it: every final state and first deferral,
 * through consumer groups (docs/design/outcomes.md). At least once, resumable. The
 * store's {@link Outcomes} without `settle` (the governor leader's), each call within the
 * client's deadline.
 */
export type ClientOutcomes = Omit<Outcomes, 'settle'>;

/** Options of {@link clientOutcomes}. */
export interface ClientOutcomesOptions {
  redis: Redis;
  keys: Keys;
  timeoutMs: number;
  claimIdleMs: number | undefined;
  maxBacklog: number | undefined;
  check: () => void;
}

/** The client's face of the store's outcome stream, and the blocking connection it reads on. */
export function clientOutcomes(options: ClientOutcomesOptions): { api: ClientOutcomes; close(): Promise<void> } {
  const { redis, keys, timeoutMs, check } = options;
  const guard = createGuard(timeoutMs);
  // A blocking read holds its connection: its own, opened at the first one.
  let blocking: Redis | undefined;
  const common = { keys, claimIdleMs: options.claimIdleMs, maxBacklog: options.maxBacklog };
  const outcomes = createOutcomes({ redis, ...common });
  const blockingOutcomes = () => {
    blocking ??= redis.duplicate();
    return createOutcomes({ redis, blocking, ...common });
  };
  const run = <T>(what: string, fn: () => Promise<T>, ms = timeoutMs): Promise<T> => {
    check();
    return (ms === timeoutMs ? guard : createGuard(ms))(`outcomes.${what}`, fn);
  };
  return {
    api: {
      subscribe: (group, opts) => run('subscribe', () => outcomes.subscribe(group, opts)),
      unsubscribe: (group) => run('unsubscribe', () => outcomes.unsubscribe(group)),
      groups: () => run('groups', () => outcomes.groups()),
      read(group, consumer, opts = {}) {
        const blockMs = opts.blockMs ?? 0;
        const face = typeof blockMs === 'number' && blockMs > 0 ? blockingOutcomes() : outcomes;
        return run('read', () => face.read(group, consumer, opts), timeoutMs + (Number(blockMs) || 0));
      },
      ack: (group, ids) => run('ack', () => outcomes.ack(group, ids)),
      backlog: () => run('backlog', () => outcomes.backlog()),
      maxBacklog: outcomes.maxBacklog,
    },
    async close() {
      const conn = blocking;
      blocking = undefined;
      // A read may be blocked on it: disconnect rather than wait for the reply.
      conn?.disconnect();
    },
  };
}
