import { parseCircuitId, type GovernorRule } from '@sluice/core';
import { decisionOf, type ControlContext, type GovernorDecision } from './decision.js';
import { evaluate, signalOf } from './rules.js';

/** Where a closed circuit's receiver restarts: a quarter of its rate, recovering additively from there. */
const CLOSE_FACTOR = 0.25;

/** Opens the circuits whose signals trip a circuit rule (judging only what followed their last closing). */
export async function openCircuits(ctx: ControlContext, rule: GovernorRule, now: number): Promise<GovernorDecision[]> {
  const { governor: g, adjustments, signals } = ctx;
  const out: GovernorDecision[] = [];
  for (const name of await signals.active('circuit')) {
    if (adjustments.circuit(name) !== undefined) continue;
    const closedAt = adjustments.circuitClosedAt(name) ?? 0;
    const windowMs = closedAt > 0 ? Math.min(g.windowMs, now - closedAt) : g.windowMs;
    if (windowMs < g.evidenceMs) continue;
    const result = evaluate(rule, await signals.read({ kind: 'circuit', name }, windowMs, now));
    if (!result.fires || rule.open === undefined) continue;
    await adjustments.setCircuit(name, {
      untilMs: now + rule.open.openForMs,
      openForMs: rule.open.openForMs,
      probes: rule.open.probes,
      rule: rule.id,
    });
    out.push(
      decisionOf(g, now, {
        rule: rule.id,
        scope: 'circuit',
        name,
        action: 'open',
        from: 1,
        to: 0,
        inputs: result.inputs,
      }),
    );
  }
  return out;
}

/**
 * Half-open circuits: once their probes have gone (or a whole probe period passed), they
 * close if the rule that opened them is calm on what the probes met, gradually (the
 * receiver restarts at a quarter of its rate and recovers additively), or open again for
 * twice as long.
 */
export async function moveCircuits(ctx: ControlContext, now: number): Promise<GovernorDecision[]> {
  const { governor: g, keys, adjustments, signals } = ctx;
  const out: GovernorDecision[] = [];
  for (const name of adjustments.circuits()) {
    const c = adjustments.circuit(name);
    const rule = g.rules.find((r) => r.id === c?.rule);
    if (!c || now < c.untilMs) continue;
    if (!rule?.open) {
      await adjustments.setCircuit(name, undefined); // its rule is gone from the config
      continue;
    }
    // What the probes met: every bucket from the one the half-open period began in.
    const w = await signals.read({ kind: 'circuit', name }, Math.max(1, now - signals.bucketOf(c.untilMs)), now);
    if (w.count('attempted') < c.probes && now < c.untilMs + c.openForMs) continue;
    const result = evaluate(rule, w);
    if (result.fires || (rule.atLeast === undefined && w.count(signalOf(rule)) > 0 && !result.calm)) {
      const openForMs = Math.min(rule.open.maxOpenForMs, c.openForMs * 2);
      await adjustments.setCircuit(name, { ...c, untilMs: now + openForMs, openForMs });
      out.push(
        decisionOf(g, now, {
          rule: rule.id,
          scope: 'circuit',
          name,
          action: 'open',
          from: 0,
          to: 0,
          inputs: result.inputs,
        }),
      );
      continue;
    }
    await adjustments.setCircuit(name, undefined);
    const layerKey = keys.bucket('receiver', parseCircuitId(name).receiver);
    const from = adjustments.governed(layerKey)?.factor ?? 1;
    if (from > CLOSE_FACTOR) await adjustments.setGoverned(layerKey, CLOSE_FACTOR, 'circuit-close', from);
    out.push(
      decisionOf(g, now, {
        rule: rule.id,
        scope: 'circuit',
        name,
        action: 'close',
        from: 0,
        to: Math.min(from, CLOSE_FACTOR),
        inputs: result.inputs,
      }),
    );
  }
  return out;
}
