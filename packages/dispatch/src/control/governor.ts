import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { systemClock, type Clock, type Keys, type SluiceConfig } from '@sluice/core';
import { createLease, type Adjustments, type Signals } from '@sluice/throttle';
import { decisionOf, type CampaignControl, type ControlContext, type GovernorDecision } from './decision.js';
import { moveCircuits, openCircuits } from './circuits.js';
import { recover } from './recovery.js';
import { applyRule, resumePauses } from './rules.js';
import type { Warmup } from './warmup.js';

export type { GovernorDecision } from './decision.js';

/** Options of {@link createGovernor}. */
export interface GovernorOptions extends CampaignControl {
  config: SluiceConfig;
  /** A connection of the caller's; not closed here. */
  redis: Redis;
  keys: Keys;
  adjustments: Adjustments;
  signals: Signals;
  logger: Logger;
  /** This process's name for the leader lease. */
  holder: string;
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
  /**
   * Where every "now" of a tick comes from (tests step it; give the signals and the
   * adjustments the same one). @defaultValue `systemClock`
   */
  clock?: Clock;
}

/** The governor: rules over the signals, acting through the shared adjustments. */
export interface Governor {
  start(): void;
  /** One evaluation (only the leader acts); the decisions it took. */
  tick(): Promise<GovernorDecision[]>;
  /** Whether this process held the leader lease at its last tick (the fleet gauges' server). */
  readonly leading: boolean;
  close(): Promise<void>;
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
  const clock = options.clock ?? systemClock;
  const ctx: ControlContext = { governor: g, keys, adjustments, signals, alerted: new Map() };
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<unknown> = Promise.resolve();
  let closed = false;
  let leading = false;

  const lease = createLease({ redis, key: keys.governorLeader(), holder: options.holder, ttlMs: g.intervalMs * 3 });

  async function log(decision: GovernorDecision): Promise<void> {
    const { action, scope, name, rule, inputs } = decision;
    if (action === 'alert') {
      const share = inputs.ratio !== undefined ? ` (${(inputs.ratio * 100).toFixed(1)}%)` : '';
      logger.warn(
        { governor: decision },
        `governor: alert ${scope} ${name}: ${inputs.signal} ${inputs.count} of ${inputs.volume} ${inputs.over}${share} (${rule})`,
      );
    } else {
      logger.info(
        { governor: decision },
        `governor: ${action} ${scope} ${name} ${decision.from.toFixed(3)} → ${decision.to.toFixed(3)} (${rule})`,
      );
    }
    await redis.xadd(keys.governorLog(), 'MAXLEN', '~', 10_000, '*', 'decision', JSON.stringify(decision));
  }

  /** The rules in their order (circuit rules open circuits), then recovery, circuits moving on, pauses over, warm-up days. */
  async function decide(now: number): Promise<GovernorDecision[]> {
    const decisions: GovernorDecision[] = [];
    const calm = new Map<string, boolean>();
    for (const rule of g.rules) {
      if (rule.scope === 'circuit') decisions.push(...(await openCircuits(ctx, rule, now)));
      else decisions.push(...(await applyRule(ctx, options, rule, now, calm)));
    }
    decisions.push(...(await recover(ctx, now, calm, decisions)));
    decisions.push(...(await moveCircuits(ctx, now)));
    decisions.push(...(await resumePauses(ctx, options, now)));
    for (const w of (await options.warmup?.tick(now)) ?? []) {
      const windowMs = config.pools[w.pool]?.warmup?.dayMs ?? 0;
      decisions.push(
        decisionOf(g, now, {
          rule: 'warmup',
          scope: 'pool',
          name: w.pool,
          action: w.action,
          from: w.from,
          to: w.to,
          inputs: { windowMs, day: w.day },
        }),
      );
    }
    return decisions;
  }

  async function tick(): Promise<GovernorDecision[]> {
    const chores = options.chores ?? [];
    if (!g.enabled && chores.length === 0) return [];
    leading = await lease.hold().catch((err: unknown) => {
      leading = false;
      throw err;
    });
    if (!leading) return [];
    for (const chore of chores)
      await chore
        .run(clock())
        .catch((err: unknown) => logger.error({ err, chore: chore.name }, `${chore.name} failed`));
    if (!g.enabled) return [];
    await adjustments.refresh();
    const decisions = await decide(clock());
    for (const d of decisions) await log(d);
    return decisions;
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
    get leading() {
      return leading;
    },
    async close() {
      closed = true;
      leading = false;
      if (timer) clearTimeout(timer);
      await running;
    },
  };
}
