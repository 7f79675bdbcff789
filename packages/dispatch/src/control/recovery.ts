import { parseBucket, parseCircuitId } from '@sluice/core';
import { decisionOf, type ControlContext, type GovernorDecision } from './decision.js';
import { cooldownOf, round } from './rules.js';

/**
 * Additive recovery of keys whose every rule is calm: steps of a share of the rate the
 * key was cut to. Below the rate where the trouble was, steady, so the key settles
 * just under it without charging at it; past it, growing a tenth with each step since
 * the cut settled, to find a capacity that has risen. A key decided on less than
 * `recovery.everyMs` ago, that `calm` marks not calm, still held by its cut's `forMs`, or
 * touched by one of this tick's `decisions` stays as it is.
 */
export async function recover(
  ctx: ControlContext,
  now: number,
  calm: ReadonlyMap<string, boolean>,
  decisions: readonly GovernorDecision[],
): Promise<GovernorDecision[]> {
  const { governor: g, keys, adjustments } = ctx;
  const out: GovernorDecision[] = [];
  // The layer key a decision of this tick is about (a circuit's: its receiver's).
  const touched = (d: GovernorDecision): string =>
    d.scope === 'circuit' ? keys.bucket('receiver', parseCircuitId(d.name).receiver) : keys.bucket(d.scope, d.name);
  for (const layerKey of adjustments.governedKeys()) {
    const current = adjustments.governed(layerKey);
    if (!current || now - current.decidedAt < g.recovery.everyMs || calm.get(layerKey) === false) continue;
    const holdMs = g.rules.find((r) => r.id === current.cutRule)?.forMs;
    if (holdMs !== undefined && now < current.cutAt + holdMs) continue;
    if (decisions.some((d) => touched(d) === layerKey) || out.some((d) => touched(d) === layerKey)) continue;
    const steps = Math.max(0, (now - current.cutAt - cooldownOf(g, current.cutRule)) / g.recovery.everyMs);
    const growth = current.factor < current.cutFrom ? 1 : 1 + steps / 10;
    const to = round(Math.min(1, current.factor + Math.max(0.0001, g.recovery.step * current.cutFactor * growth)));
    await adjustments.setGoverned(layerKey, to, 'recovery', current.factor);
    // A governed key is always a bucket key; one that is not is logged as a receiver's, as before.
    const { kind: scope, name } = parseBucket(keys, layerKey) ?? { kind: 'receiver', name: layerKey };
    out.push(
      decisionOf(g, now, {
        rule: 'recovery',
        scope,
        name,
        action: 'restore',
        from: current.factor,
        to,
        inputs: { windowMs: now - current.decidedAt },
      }),
    );
  }
  return out;
}
