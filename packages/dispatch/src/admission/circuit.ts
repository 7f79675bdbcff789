import { circuitId, poolOf, type IntakeJobData } from '@sluice/core';
import { CONTINUE, jitter, type Deps, type Step } from './types.js';

/**
 * Check 4, the circuit of (receiver, pool, stream): open, nothing goes; half-open, a few
 * probes a period. Only this message waits: other receivers are not held.
 */
export async function checkCircuit(
  deps: Pick<Deps, 'config' | 'adjustments' | 'redis' | 'keys' | 'random'>,
  m: IntakeJobData,
  now: number,
  subject: { provider: string; receiver: string },
): Promise<Step> {
  const { config, adjustments, redis, keys } = deps;
  const circuit = circuitId({ receiver: subject.receiver, pool: poolOf(config, subject.provider), stream: m.stream });
  const state = adjustments.circuit(circuit);
  if (state === undefined) return CONTINUE;
  let until = state.untilMs;
  if (now >= state.untilMs) {
    const period = Math.floor((now - state.untilMs) / state.openForMs);
    const probeKey = keys.circuitProbes(circuit, period);
    const [[, n]] = (await redis
      .multi()
      .incr(probeKey)
      .pexpire(probeKey, state.openForMs * 2)
      .exec()) as [[unknown, number]];
    until = n <= state.probes ? 0 : state.untilMs + (period + 1) * state.openForMs;
  }
  if (until <= now) return CONTINUE;
  const at = until + jitter(deps);
  return {
    kind: 'wait',
    at,
    note: { by: 'circuit', key: circuit, untilMs: at, reason: `circuit open (${state.rule})` },
  };
}
