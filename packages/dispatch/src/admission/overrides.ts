import type { Layers, OverrideState } from '@sluice/throttle';
import { CONTINUE, jitter, type AdmitContext, type Deps, type Step } from './types.js';

/**
 * A message held by an override looks again at least this often, so an override cleared
 * before its end frees its mail within a minute rather than at the end it was set for.
 */
export const OVERRIDE_RECHECK_MS = 60_000;

/** The first `pause` or `suspend` override in force on a message's layers: nothing is admitted through them. */
function stoppedBy(adjustments: Deps['adjustments'], layers: Layers): OverrideState | undefined {
  for (const layer of layers) {
    const o = adjustments.override(layer.key);
    if (o !== undefined && o.kind !== 'rate') return o;
  }
  return undefined;
}

/**
 * Check 4a, operator overrides: a paused or suspended key admits nothing until it ends,
 * and the limiter is not asked. A campaign's own pause holds its whole queue; any other
 * holds this message alone.
 */
export function checkOverrides(
  deps: Pick<Deps, 'adjustments' | 'random'>,
  layers: Layers,
  now: number,
  ctx: AdmitContext,
): Step {
  const stop = stoppedBy(deps.adjustments, layers);
  if (stop === undefined) return CONTINUE;
  const note = {
    by: 'override',
    key: `${stop.scope}:${stop.name}`,
    untilMs: stop.untilMs,
    reason: `${stop.kind} by ${stop.actor}: ${stop.reason}`,
  };
  const at = Math.min(stop.untilMs, now + OVERRIDE_RECHECK_MS) + jitter(deps);
  return ctx.campaignQueue !== undefined && stop.scope === 'campaign'
    ? { kind: 'hold', ms: at - now, note }
    : { kind: 'wait', at, note };
}
