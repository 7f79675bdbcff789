import type { GovernorRule } from '@sluice/core';
import type { SignalField, SignalWindow } from '@sluice/throttle';
import { decisionOf, type CampaignControl, type ControlContext, type GovernorDecision } from './decision.js';

/** Factors are kept to 4 decimals: they are compared, logged and stored as text. */
export const round = (x: number): number => Math.round(x * 10_000) / 10_000;

/** The signal field a rule counts. */
export const signalOf = (rule: GovernorRule): SignalField =>
  rule.signal === 'matched' ? `matched:${rule.id}` : (rule.signal as SignalField);

/** What a rule made of a window: whether it trips, whether it is calm, and what it saw. */
export interface Evaluation {
  fires: boolean;
  calm: boolean;
  inputs: GovernorDecision['inputs'];
}

/** `signal / over` of a window, or the count, and whether it trips the rule. */
export function evaluate(rule: GovernorRule, w: SignalWindow): Evaluation {
  const count = w.count(signalOf(rule));
  if (rule.atLeast !== undefined) {
    return {
      fires: count >= rule.atLeast,
      calm: count < Math.ceil(rule.atLeast / 2),
      inputs: { signal: rule.signal, count, windowMs: w.windowMs },
    };
  }
  const volume = w.count(rule.over as Parameters<SignalWindow['count']>[0]);
  const ratio = w.ratio(count, volume, rule.minVolume);
  const inputs = {
    signal: rule.signal,
    count,
    over: rule.over,
    volume,
    ...(ratio !== undefined ? { ratio } : {}),
    windowMs: w.windowMs,
  };
  // Hysteresis: a key recovers only while the ratio is below half the threshold, or, with too
  // few sends to tell, while nothing bad came at all.
  const calm = ratio === undefined ? count === 0 : ratio < rule.above! / 2;
  return { fires: ratio !== undefined && ratio > rule.above!, calm, inputs };
}

/** How long after a decision by `ruleId` its effect takes to show (a recovery step: at once). */
export function cooldownOf(g: ControlContext['governor'], ruleId: string): number {
  if (ruleId === 'recovery') return 0;
  const rule = g.rules.find((r) => r.id === ruleId);
  return rule?.cooldownMs ?? g.cooldownMs;
}

/**
 * One rule of a layer scope over every key of it that had signals lately: cuts the key's
 * governed factor or pauses its campaign. `calm` gathers, per layer key, whether every rule
 * so far was calm on it (recovery reads it).
 */
export async function applyRule(
  ctx: ControlContext,
  campaigns: CampaignControl,
  rule: GovernorRule,
  now: number,
  calm: Map<string, boolean>,
): Promise<GovernorDecision[]> {
  const { governor: g, keys, adjustments, signals } = ctx;
  const decisions: GovernorDecision[] = [];
  const scope = rule.scope;
  if (scope === 'circuit') return decisions; // a circuit rule opens circuits (circuits.ts)
  if (rule.alert) return alerts(ctx, rule, now);
  for (const name of await signals.active(scope)) {
    const layerKey = keys.bucket(scope, name);
    const current = adjustments.governed(layerKey);
    // Only what happened once the last cut of this key had had its cool-down to show:
    // the cut already answered what came before (mail admitted before a cut still goes
    // out at the old rate for a moment). Recovery steps do not restart the window, or
    // a key climbing back a step a second would never gather enough to be judged.
    // Signals come in whole buckets: the first one that began after the cool-down.
    const settled = current
      ? signals.bucketOf(current.cutAt + cooldownOf(g, current.cutRule) - 1) + signals.bucketMs
      : 0;
    if (current && now - settled < g.evidenceMs) {
      // Too soon to tell what the last cut did: neither cut again nor restore.
      calm.set(layerKey, false);
      continue;
    }
    const ruleWindowMs = rule.windowMs ?? g.windowMs;
    const windowMs = current ? Math.min(ruleWindowMs, now - settled) : ruleWindowMs;
    const result = evaluate(rule, await signals.read({ kind: scope, name }, windowMs, now));
    calm.set(layerKey, (calm.get(layerKey) ?? true) && result.calm);
    if (!result.fires) continue;
    // A key backpressure lowered before the governor's first decision is cut from where it
    // runs, never from its configured rate: a cut that raised it would charge at the limit.
    const from = current?.factor ?? adjustments.factor(layerKey);
    const to = await cutKey(ctx, rule, layerKey, from, result);
    if (to !== undefined) {
      decisions.push(
        decisionOf(g, now, { rule: rule.id, scope, name, action: 'lower', from, to, inputs: result.inputs }),
      );
    }
    if (scope === 'campaign' && (await pauseCampaign(ctx, campaigns, rule, name, now))) {
      decisions.push(
        decisionOf(g, now, { rule: rule.id, scope, name, action: 'pause', from: 1, to: 0, inputs: result.inputs }),
      );
    }
  }
  return decisions;
}

/**
 * An alert rule over every key of its scope that had signals lately: a decision `alert` for
 * each key it trips, at most once per cool-down. It reads its own window and leaves the key's
 * rate and its recovery alone.
 */
async function alerts(ctx: ControlContext, rule: GovernorRule, now: number): Promise<GovernorDecision[]> {
  const { governor: g, keys, adjustments, signals, alerted } = ctx;
  const decisions: GovernorDecision[] = [];
  const scope = rule.scope as Exclude<GovernorRule['scope'], 'circuit'>;
  for (const name of await signals.active(scope)) {
    const id = `${rule.id}|${scope}|${name}`;
    if (now - (alerted.get(id) ?? -Infinity) < cooldownOf(g, rule.id)) continue;
    const result = evaluate(rule, await signals.read({ kind: scope, name }, rule.windowMs ?? g.windowMs, now));
    if (!result.fires) continue;
    alerted.set(id, now);
    const factor = adjustments.factor(keys.bucket(scope, name));
    decisions.push(
      decisionOf(g, now, {
        rule: rule.id,
        scope,
        name,
        action: 'alert',
        from: factor,
        to: factor,
        inputs: result.inputs,
      }),
    );
  }
  return decisions;
}

/**
 * A rule's `pause` of a campaign that tripped it: only a campaign of one of its classes,
 * not paused by the governor already, for the rule's `forMs` (an hour without). Whether it paused it.
 */
async function pauseCampaign(
  ctx: ControlContext,
  campaigns: CampaignControl,
  rule: GovernorRule,
  name: string,
  now: number,
): Promise<boolean> {
  const { governor: g, adjustments } = ctx;
  if (rule.pause === undefined) return false;
  const cls = await campaigns.campaignClass(name);
  if (cls === undefined || !rule.pause.includes(cls as never) || adjustments.campaignPause(name) !== undefined)
    return false;
  await campaigns.pauseCampaign(name, `governor rule ${rule.id} (${g.version})`);
  await adjustments.setCampaignPause(name, now + (rule.forMs ?? 3_600_000), rule.id);
  return true;
}

/**
 * A rule's cut of one layer key that tripped it (multiply, or in proportion) from its
 * factor `from`: the factor it set, or `undefined` when it would not lower the key.
 */
async function cutKey(
  ctx: ControlContext,
  rule: GovernorRule,
  layerKey: string,
  from: number,
  result: Evaluation,
): Promise<number | undefined> {
  const { governor: g, adjustments } = ctx;
  if (rule.multiply === undefined && !rule.proportional) return undefined;
  // A proportional cut: to just under the share that got through. It scales what was
  // really sent (not the configured rate: a class's share of the bucket, or another
  // layer, may have held the sends lower), so one cut lands just under what the
  // receiver takes, however much of the key's rate the traffic used.
  const target = rule.proportional ? from * (1 - (result.inputs.ratio ?? 0)) * 0.97 : 1;
  const to = round(Math.max(g.floor, Math.min(from * (rule.multiply ?? 1), target)));
  if (to >= from) return undefined;
  await adjustments.setGoverned(layerKey, to, rule.id, from);
  return to;
}

/** Resumes the campaigns whose governor pause is over. */
export async function resumePauses(
  ctx: ControlContext,
  campaigns: CampaignControl,
  now: number,
): Promise<GovernorDecision[]> {
  const { governor: g, adjustments } = ctx;
  const decisions: GovernorDecision[] = [];
  for (const name of adjustments.campaignPauses()) {
    const pause = adjustments.campaignPause(name);
    if (!pause || pause.untilMs > now) continue;
    await campaigns.resumeCampaign(name);
    await adjustments.setCampaignPause(name, undefined);
    decisions.push(
      decisionOf(g, now, {
        rule: pause.rule,
        scope: 'campaign',
        name,
        action: 'resume',
        from: 0,
        to: 1,
        inputs: { windowMs: 0 },
      }),
    );
  }
  return decisions;
}
