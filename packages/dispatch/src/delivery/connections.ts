import { PRIORITY_CLASSES, receiverNamed, type DispatchJobData } from '@sluice/core';
import type { DeliveryContext } from './context.js';

/**
 * A receiver's connection slots in this process: how many sends to it may be in flight at
 * once. A reply saying "too many connections" lowers them for every process (the
 * adjustments entry `keys.receiverConnections`, cut and recovered as backpressure cuts a
 * rate), and leaves the receiver's rate alone: the receiver asked for fewer at once, not
 * fewer a second.
 */
export interface ReceiverConnections {
  /** A slot for `m`'s receiver, with its release; undefined when they are all in use. */
  take(m: DispatchJobData): (() => void) | undefined;
  /** The slots `m`'s receiver has in this process now; undefined when it has no cap of its own. */
  limit(receiver: string): number | undefined;
}

/** How long a send that found its receiver's slots full waits before it looks again. */
export const CONNECTION_WAIT_MS = 250;

/**
 * Creates this process's receiver connection slots. A receiver has a cap when its policy sets
 * `connections` or once a reply lowered its slots; the base of a lowered one without a
 * policy cap is everything this process may have in flight (its worker concurrency).
 */
export function createReceiverConnections(ctx: DeliveryContext): ReceiverConnections {
  const { config, keys, adjustments } = ctx;
  const processMax = PRIORITY_CLASSES.reduce((n, p) => n + config.worker.concurrency[p], 0);
  const inFlight = new Map<string, number>();

  function limit(receiver: string): number | undefined {
    const configured = receiverNamed(config, receiver).connections;
    const factor = adjustments.factor(keys.receiverConnections(receiver));
    if (configured === undefined && factor >= 1) return undefined;
    return Math.max(1, Math.floor((configured ?? processMax) * factor));
  }

  return {
    limit,
    take(m) {
      const n = inFlight.get(m.receiver) ?? 0;
      const cap = limit(m.receiver);
      if (cap !== undefined && n >= cap) return undefined;
      inFlight.set(m.receiver, n + 1);
      let released = false;
      return () => {
        if (released) return;
        released = true;
        const left = (inFlight.get(m.receiver) ?? 1) - 1;
        if (left <= 0) inFlight.delete(m.receiver);
        else inFlight.set(m.receiver, left);
      };
    },
  };
}
