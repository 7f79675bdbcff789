import type { HashCopy } from './hash-copy.js';
import type { Adjustments } from './types.js';

/** Providers' caps (`cap:`), pauses (`pause:`) and down marks (`down:`). */
export type Providers = Pick<Adjustments, 'cap' | 'setCap' | 'standing' | 'markDown' | 'pause'>;

/** The provider operations over a process's copy of the hash. */
export function createProviders(copy: HashCopy): Providers {
  const { clock } = copy;
  return {
    cap: (provider) => copy.get('cap', provider),
    async setCap(provider, rate) {
      await copy.write('cap', provider, rate);
    },
    standing(provider) {
      const now = clock();
      const paused = copy.get('pause', provider);
      if (paused && paused.untilMs > now) return { state: 'paused', untilMs: paused.untilMs, reason: paused.reason };
      const down = copy.get('down', provider);
      if (down && down.untilMs > now) return { state: 'down', untilMs: down.untilMs, reason: down.reason };
      return { state: 'ok' };
    },
    async markDown(provider, forMs, reason) {
      await copy.write('down', provider, { untilMs: clock() + forMs, reason });
    },
    async pause(provider, untilMs, reason = '') {
      await copy.write('pause', provider, untilMs === undefined ? undefined : { untilMs, reason });
    },
  };
}
