import { adjustmentField, encodeAdjustment } from './codec.js';
import type { HashCopy } from './hash-copy.js';
import type { Adjustments } from './types.js';

/** Circuits (`circuit:`) and when each last closed (`circuitclosed:`). */
export type Circuits = Pick<Adjustments, 'circuit' | 'circuits' | 'setCircuit' | 'circuitClosedAt'>;

/** The circuit operations over a process's copy of the hash. */
export function createCircuits(copy: HashCopy): Circuits {
  return {
    circuit: (name) => copy.get('circuit', name),
    circuits: () => copy.names('circuit'),
    async setCircuit(name, state) {
      if (state === undefined) {
        // Closed and stamped in one step: the governor judges a circuit again only on what
        // followed its last closing, never on the signals that opened it.
        const closedAt = copy.clock();
        copy.keep('circuit', name, undefined);
        copy.keep('circuitClosed', name, closedAt);
        await copy.redis
          .multi()
          .hdel(copy.key, adjustmentField('circuit', name))
          .hset(copy.key, adjustmentField('circuitClosed', name), encodeAdjustment('circuitClosed', closedAt))
          .exec();
        return;
      }
      await copy.write('circuit', name, state);
    },
    circuitClosedAt: (name) => copy.get('circuitClosed', name),
  };
}
