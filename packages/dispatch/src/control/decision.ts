import type { Keys, LayerKind, SluiceConfig } from '@sluice/core';
import type { Adjustments, Signals } from '@sluice/throttle';
import type { WarmupDecision } from './warmup.js';

/** One decision of the governor, as logged (stream `keys.governorLog()` and the process log). */
export interface GovernorDecision {
  at: number;
  /** The rule's id, or `recovery`. */
  rule: string;
  version: string;
  scope: LayerKind | 'circuit';
  name: string;
  /**
   * `advance`, `hold` and `warm` are a warming pool's day judged (rule `warmup`); `alert` a rule
   * that only tells (the factor unchanged).
   */
  action: 'lower' | 'restore' | 'pause' | 'resume' | 'open' | 'close' | 'advance' | 'hold' | 'warm' | 'alert';
  /** The key's factor before and after (1 = its configured rate); for a warm-up, its step. */
  from: number;
  to: number;
  /** What the rule saw: the counts, the window and the ratio (a warm-up: the day's counts, and why it was held). */
  inputs: {
    signal?: string;
    count?: number;
    over?: string;
    volume?: number;
    ratio?: number;
    windowMs: number;
    day?: WarmupDecision['day'];
  };
}

/**
 * A decision taken at `at` under the rules' version, its fields in the order they are logged
 * (the governor's log stream keeps them as written).
 */
export function decisionOf(
  g: SluiceConfig['governor'],
  at: number,
  d: Omit<GovernorDecision, 'at' | 'version'>,
): GovernorDecision {
  const { rule, scope, name, action, from, to, inputs } = d;
  return { at, rule, version: g.version, scope, name, action, from, to, inputs };
}

/** How the governor acts on a campaign's queue (the scheduler's, through the campaign lifecycle). */
export interface CampaignControl {
  /** Pauses a campaign's queue (a rule's `pause`). */
  pauseCampaign(campaignId: string, reason: string): Promise<void>;
  /** Resumes a campaign the governor paused, once the pause is over. */
  resumeCampaign(campaignId: string): Promise<void>;
  /** Classes of a campaign (its queue's class), to match a rule's `pause` list. */
  campaignClass(campaignId: string): Promise<string | undefined>;
}

/** What the rules, the recovery and the circuits read and act through, in one tick. */
export interface ControlContext {
  governor: SluiceConfig['governor'];
  keys: Keys;
  adjustments: Adjustments;
  signals: Signals;
  /** When each (alert rule, scope, key) last alerted: an alert repeats once per cool-down. */
  alerted: Map<string, number>;
}
