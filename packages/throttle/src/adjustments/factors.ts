import type { HashCopy } from './hash-copy.js';
import { adjustmentField, type SlowState } from './codec.js';
import type { Adjustments, BackpressureOptions } from './types.js';

/** The factor a lowered key runs at `now`: held until `untilMs`, then doubled every `holdMs`. */
export function slowFactor(slow: Pick<SlowState, 'factor' | 'untilMs'>, now: number, holdMs: number): number {
  if (now <= slow.untilMs) return slow.factor;
  return Math.min(1, slow.factor * 2 ** (Math.floor((now - slow.untilMs) / holdMs) + 1));
}

/** A layer key's rate factor: backpressure's cuts (`slow:`) and the governor's (`gov:`). */
export type Factors = Pick<
  Adjustments,
  'factor' | 'governed' | 'governedKeys' | 'setGoverned' | 'loweredAt' | 'slowDown'
>;

/** The factor operations over a process's copy of the hash. */
export function createFactors(copy: HashCopy, backpressure: BackpressureOptions): Factors {
  const { clock } = copy;
  const governed: Factors['governed'] = (layerKey) => copy.get('governed', layerKey);

  return {
    governed,
    factor(layerKey) {
      // Once the governor has set a key it owns it: backpressure is the brake for the
      // moment before the governor's first decision, not a second controller fighting it.
      const g = governed(layerKey);
      if (g !== undefined) return g.factor;
      const slow = copy.get('slow', layerKey);
      if (slow === undefined) return 1;
      return slowFactor(slow, clock(), backpressure.holdMs);
    },
    governedKeys: () => copy.names('governed'),
    async setGoverned(layerKey, factor, rule, from = 1) {
      if (factor === undefined || factor >= 1) {
        await copy.write('governed', layerKey, undefined);
        return;
      }
      const now = clock();
      // A recovery step keeps the last cut, which recovery climbs from.
      const last = rule === 'recovery' ? governed(layerKey) : undefined;
      const cut = last ?? { cutAt: now, cutFactor: factor, cutRule: rule, cutFrom: from };
      await copy.write('governed', layerKey, {
        factor,
        decidedAt: now,
        rule,
        from,
        cutAt: cut.cutAt,
        cutFactor: cut.cutFactor,
        cutRule: cut.cutRule,
        cutFrom: cut.cutFrom,
      });
    },
    loweredAt(layerKey) {
      // Only a deep cut (to 60% or less) sends admitted mail back to the limiter: for a
      // shallow one, the churn of asking again costs more than the few sends it spares.
      const g = governed(layerKey);
      if (g !== undefined) return g.rule !== 'recovery' && g.factor <= g.from * 0.6 ? g.decidedAt : undefined;
      return copy.get('slow', layerKey)?.lastCut;
    },
    async slowDown(layerKey) {
      // The script reads Redis TIME for its cut, cooldown and hold (not the clock): the
      // processes racing to cut one burst compare against one clock.
      const [cut, micro, untilMs, lastCut] = (await copy.redis.sluiceSlowDown(
        copy.key,
        adjustmentField('slow', layerKey),
        backpressure.factor,
        backpressure.minFactor,
        backpressure.cooldownMs,
        backpressure.holdMs,
      )) as [number, number, number, number];
      copy.keep('slow', layerKey, { factor: micro / 1e6, untilMs, lastCut });
      return { cut: cut === 1, factor: micro / 1e6, untilMs };
    },
  };
}
