import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { GovernorRule, Keys, LayerKind, SluiceConfig } from '@sluice/core';
import { createLease, type Adjustments, type SignalField, type Signals, type SignalWindow } from '@sluice/throttle';
import type { Warmup, WarmupDecision } from './warmup.js';

/** One decision of the governor, as logged (stream `keys.governorLog()` and the process log). */
export interface GovernorDecision {
  at: number;
  /** The rule's id, or `recovery`. */
  rule: string;
  version: string;
  scope: LayerKind | 'circuit';
  name: string;
  /** `advance`, `hold` and `warm` are a warming pool's day judged (rule `warmup`). */
  action: 'lower' | 'restore' | 'pause' | 'resume' | 'open' | 'close' | 'advance' | 'hold' | 'warm';
  /** The key's factor before and after (1 = its configured rate); for a warm-up, its step. */
  from: number;
  to: number;
  /** What the rule saw: the counts, the window and the ratio (a warm-up: the day's counts, and why it was held). */
  inputs: { signal?: string; count?: number; over?: string; volume?: number; ratio?: number; windowMs: number; day?: WarmupDecision['day'] };
}

/** Options of {@link createGovernor}. */
export interface GovernorOptions {
  config: SluiceConfig;
  /** A connection of the caller's; not closed here. */
  redis: Redis;
  keys: Keys;
  adjustments: Adjustments;
  signals: Signals;
  logger: Logger;
  /** This process's name for the leader lease. */
  holder: string;
  /** Pauses a campaign's queue (a rule's `pause`). */
  pauseCampaign(campaignId: string, reason: string): Promise<void>;
  /** Resumes a campaign the governor paused, once the pause is over. */
  resumeCampaign(campaignId: string): Promise<void>;
  /** Classes of a campaign (its queue's class), to match a rule's `pause` list. */
  campaignClass(campaignId: string): Promise<string | undefined>;
  /** The warming pools, whose days the leader judges. */
  warmup?: Warmup;
  /**
   * What the leader does every tick besides the rules, even with them switched off: the
   * scheduler sweeps the overrides whose time is up (readers already ignore them: this
   * tidies the hash and completes the audit trail) and folds settled signals into the
   * outcome totals (signals keep five minutes, the totals everything). A chore that fails
   * is logged and runs again next tick; it never stops the rules.
   */
  chores?: readonly { name: string; run(now: number): Promise<unknown> }[];
}

/** The governor: rules over the signals, acting through the shared adjustments. */
export interface Governor {
  start(): void;
  /** One evaluation (only the leader acts); the decisions it took. */
  tick(): Promise<GovernorDecision[]>;
  close(): Promise<void>;
}

/** Factors are kept to 4 decimals: they are compared, logged and stored as text. */
const round = (x: number): number => Math.round(x * 10_000) / 10_000;

/** The signal field a rule counts. */
const signalOf = (rule: GovernorRule): SignalField => (rule.signal === 'matched' ? `matched:${rule.id}` : (rule.signal as SignalField));

/** `signal / over` of a window, or the count, and whether it trips the rule. */
function evaluate(
  rule: GovernorRule,
  w: SignalWindow,
): { fires: boolean; calm: boolean; inputs: GovernorDecision['inputs'] } {
  const count = w.count(signalOf(rule));
  if (rule.atLeast !== undefined) {
    return { fires: count >= rule.atLeast, calm: count < Math.ceil(rule.atLeast / 2), inputs: { signal: rule.signal, count, windowMs: w.windowMs } };
  }
  const volume = w.count(rule.over as Parameters<SignalWindow['count']>[0]);
  const ratio = w.ratio(count, volume, rule.minVolume);
  const inputs = { signal: rule.signal, count, over: rule.over, volume, ...(ratio !== undefined ? { ratio } : {}), windowMs: w.windowMs };
  // Hysteresis: a key recovers only while the ratio is below half the threshold, or, with too
  // few sends to tell, while nothing bad came at all.
  const calm = ratio === undefined ? count === 0 : ratio < rule.above! / 2;
  return { fires: ratio !== undefined && ratio > rule.above!, calm, inputs };
}

/**
 * Creates the governor. It runs in every scheduler, and the one holding the lease
 * (`keys.governorLeader()`) acts: no extra process to deploy, and another scheduler takes
 * over within three ticks when the leader stops. Each tick, for every rule and every key of
 * its scope that had signals lately, it reads the window since the key's last decision
 * (never the signals the last cut already answered), and multiplies the key's governed
 * factor (down to `floor`) or pauses its campaign. A key cut less than `cooldownMs` ago is
 * left alone, so the effect of one cut shows before the next. A lowered key whose rules are
 * all calm (below half their threshold) gains `recovery.step` every `recovery.everyMs`:
 * multiplicative decrease, additive increase. Sluice's own waits are never signals, so its
 * own holding back cannot trigger a rule.
 */
export function createGovernor(options: GovernorOptions): Governor {
  const { config, redis, keys, adjustments, signals, logger } = options;
  const g = config.governor;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<unknown> = Promise.resolve();
  let closed = false;

  const lease = createLease({ redis, key: keys.governorLeader(), holder: options.holder, ttlMs: g.intervalMs * 3 });

  async function log(decision: GovernorDecision): Promise<void> {
    logger.info({ governor: decision }, `governor: ${decision.action} ${decision.scope} ${decision.name} ${decision.from.toFixed(3)} → ${decision.to.toFixed(3)} (${decision.rule})`);
    await redis.xadd(keys.governorLog(), 'MAXLEN', '~', 10_000, '*', 'decision', JSON.stringify(decision));
  }

  /** Opens the circuits whose signals trip a circuit rule (judging only what followed their last closing). */
  async function openCircuits(rule: GovernorRule, now: number): Promise<GovernorDecision[]> {
    const out: GovernorDecision[] = [];
    for (const name of await signals.active('circuit')) {
      if (adjustments.circuit(name) !== undefined) continue;
      const closedAt = adjustments.circuitClosedAt(name) ?? 0;
      const windowMs = closedAt > 0 ? Math.min(g.windowMs, now - closedAt) : g.windowMs;
      if (windowMs < g.evidenceMs) continue;
      const result = evaluate(rule, await signals.read({ kind: 'circuit', name }, windowMs, now));
      if (!result.fires || rule.open === undefined) continue;
      await adjustments.setCircuit(name, { untilMs: now + rule.open.openForMs, openForMs: rule.open.openForMs, probes: rule.open.probes, rule: rule.id });
      out.push({ at: now, rule: rule.id, version: g.version, scope: 'circuit', name, action: 'open', from: 1, to: 0, inputs: result.inputs });
    }
    return out;
  }

  /**
   * Half-open circuits: once their probes have gone (or a whole probe period passed), they
   * close if the rule that opened them is calm on what the probes met, gradually (the
   * receiver restarts at a quarter of its rate and recovers additively), or open again for
   * twice as long.
   */
  async function moveCircuits(now: number): Promise<GovernorDecision[]> {
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
        out.push({ at: now, rule: rule.id, version: g.version, scope: 'circuit', name, action: 'open', from: 0, to: 0, inputs: result.inputs });
        continue;
      }
      await adjustments.setCircuit(name, undefined);
      const receiver = name.split('|')[0]!;
      const layerKey = keys.bucket('receiver', receiver);
      const from = adjustments.governed(layerKey)?.factor ?? 1;
      if (from > 0.25) await adjustments.setGoverned(layerKey, 0.25, 'circuit-close', from);
      out.push({ at: now, rule: rule.id, version: g.version, scope: 'circuit', name, action: 'close', from: 0, to: Math.min(from, 0.25), inputs: result.inputs });
    }
    return out;
  }

  /** How long after a decision by `ruleId` its effect takes to show (a recovery step: at once). */
  function cooldownOf(ruleId: string): number {
    if (ruleId === 'recovery') return 0;
    const rule = g.rules.find((r) => r.id === ruleId);
    return rule?.cooldownMs ?? g.cooldownMs;
  }

  async function tick(): Promise<GovernorDecision[]> {
    const chores = options.chores ?? [];
    if ((!g.enabled && chores.length === 0) || !(await lease.hold())) return [];
    for (const chore of chores) await chore.run(Date.now()).catch((err: unknown) => logger.error({ err, chore: chore.name }, `${chore.name} failed`));
    if (!g.enabled) return [];
    await adjustments.refresh();
    const now = Date.now();
    const decisions: GovernorDecision[] = [];
    const calm = new Map<string, boolean>();
    for (const rule of g.rules) {
      if (rule.scope === 'circuit') {
        decisions.push(...(await openCircuits(rule, now)));
        continue;
      }
      const scope = rule.scope;
      for (const name of await signals.active(scope)) {
        const layerKey = keys.bucket(scope, name);
        const current = adjustments.governed(layerKey);
        // Only what happened once the last cut of this key had had its cool-down to show:
        // the cut already answered what came before (mail admitted before a cut still goes
        // out at the old rate for a moment). Recovery steps do not restart the window, or
        // a key climbing back a step a second would never gather enough to be judged.
        // Signals come in whole buckets: the first one that began after the cool-down.
        const settled = current ? signals.bucketOf(current.cutAt + cooldownOf(current.cutRule) - 1) + signals.bucketMs : 0;
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
        if (rule.multiply !== undefined || rule.proportional) {
          const from = current?.factor ?? 1;
          // A proportional cut: to just under the share that got through. It scales what was
          // really sent (not the configured rate: a class's share of the bucket, or another
          // layer, may have held the sends lower), so one cut lands just under what the
          // receiver takes, however much of the key's rate the traffic used.
          const target = rule.proportional ? from * (1 - (result.inputs.ratio ?? 0)) * 0.97 : 1;
          const to = round(Math.max(g.floor, Math.min(from * (rule.multiply ?? 1), target)));
          if (to < from) {
            await adjustments.setGoverned(layerKey, to, rule.id, from);
            decisions.push({ at: now, rule: rule.id, version: g.version, scope, name, action: 'lower', from, to, inputs: result.inputs });
          }
        }
        if (rule.pause !== undefined && scope === 'campaign') {
          const cls = await options.campaignClass(name);
          if (cls !== undefined && rule.pause.includes(cls as never) && adjustments.campaignPause(name) === undefined) {
            await options.pauseCampaign(name, `governor rule ${rule.id} (${g.version})`);
            await adjustments.setCampaignPause(name, now + (rule.forMs ?? 3_600_000), rule.id);
            decisions.push({ at: now, rule: rule.id, version: g.version, scope, name, action: 'pause', from: 1, to: 0, inputs: result.inputs });
          }
        }
      }
    }
    // Additive recovery of keys whose every rule is calm: steps of a share of the rate the
    // key was cut to. Below the rate where the trouble was, steady, so the key settles
    // just under it without charging at it; past it, growing a tenth with each step since
    // the cut settled, to find a capacity that has risen.
    for (const layerKey of adjustments.governedKeys()) {
      const current = adjustments.governed(layerKey);
      if (!current || now - current.decidedAt < g.recovery.everyMs || calm.get(layerKey) === false) continue;
      const holdMs = g.rules.find((r) => r.id === current.cutRule)?.forMs;
      if (holdMs !== undefined && now < current.cutAt + holdMs) continue;
      const touched = (d: GovernorDecision): string => (d.scope === 'circuit' ? keys.bucket('receiver', d.name.split('|')[0]!) : keys.bucket(d.scope, d.name));
      if (decisions.some((d) => touched(d) === layerKey)) continue;
      const steps = Math.max(0, (now - current.cutAt - cooldownOf(current.cutRule)) / g.recovery.everyMs);
      const growth = current.factor < current.cutFrom ? 1 : 1 + steps / 10;
      const to = round(Math.min(1, current.factor + Math.max(0.0001, g.recovery.step * current.cutFactor * growth)));
      await adjustments.setGoverned(layerKey, to, 'recovery', current.factor);
      const [scope, name] = describe(layerKey);
      decisions.push({ at: now, rule: 'recovery', version: g.version, scope, name, action: 'restore', from: current.factor, to, inputs: { windowMs: now - current.decidedAt } });
    }
    decisions.push(...(await moveCircuits(now)));
    // Pauses that are over.
    for (const name of adjustments.campaignPauses()) {
      const pause = adjustments.campaignPause(name);
      if (!pause || pause.untilMs > now) continue;
      await options.resumeCampaign(name);
      await adjustments.setCampaignPause(name, undefined);
      decisions.push({ at: now, rule: pause.rule, version: g.version, scope: 'campaign', name, action: 'resume', from: 0, to: 1, inputs: { windowMs: 0 } });
    }
    for (const w of (await options.warmup?.tick(now)) ?? []) {
      const windowMs = config.pools[w.pool]?.warmup?.dayMs ?? 0;
      decisions.push({ at: now, rule: 'warmup', version: g.version, scope: 'pool', name: w.pool, action: w.action, from: w.from, to: w.to, inputs: { windowMs, day: w.day } });
    }
    for (const d of decisions) await log(d);
    return decisions;
  }

  /** The scope and name of a governed layer key (they are written by `keys.bucket`). */
  function describe(layerKey: string): [LayerKind, string] {
    for (const scope of ['provider', 'receiver', 'pool', 'campaign', 'tenant'] as const) {
      const prefix = keys.bucket(scope, '');
      if (layerKey.startsWith(prefix)) return [scope, layerKey.slice(prefix.length)];
    }
    return ['receiver', layerKey];
  }

  return {
    start() {
      const loop = (): void => {
        timer = setTimeout(() => {
          running = tick()
            .catch((err: unknown) => logger.error({ err }, 'governor tick failed'))
            .finally(() => {
              if (!closed) loop();
            });
        }, g.intervalMs);
      };
      if (g.enabled || (options.chores ?? []).length > 0) loop();
    },
    tick,
    async close() {
      closed = true;
      if (timer) clearTimeout(timer);
      await running;
    },
  };
}
