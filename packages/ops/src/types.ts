import type { LayerKind, PriorityClass } from '@sluice/core';
import type { FleetView, LaunchSummary } from '@sluice/store';
import type { OverrideKind, OverrideState as Override } from '@sluice/throttle';

/**
 * An override in force, as the adjustments hash keeps it (`OverrideState` of
 * `@sluice/throttle`, which every scheduler and worker reads). It always has an expiry:
 * there is no way to set one without.
 */
export type { OverrideKind, Override };

/** One entry of the audit trail (a Redis stream, `keys.audit()`). */
export interface AuditEntry {
  /** The stream entry id. */
  id: string;
  at: number;
  /** `approve`: an operator approved a campaign's launch (scope `campaign`, kind `launch-delay` or `launch-split`). */
  action: 'set' | 'clear' | 'expire' | 'approve';
  scope: LayerKind;
  name: string;
  kind: OverrideKind | `launch-${string}`;
  rate?: number;
  untilMs?: number;
  /** Who did it (`sluice` for an expiry). */
  actor: string;
  reason: string;
}

/** One quota key as the status shows it. */
export interface KeyStatus {
  scope: LayerKind;
  name: string;
  /** From config (messages per second); absent: no limit of its own. */
  configuredRate?: number;
  /** At the factor in force (governor, backpressure, account cap) and any rate override. */
  effectiveRate?: number;
  /** Share of the configured rate in force (1 = full). */
  factor: number;
  /** Attempts per second over the last few seconds (from the signals). */
  sendRate: number;
  /** Sends the bucket could take at once right now (its shared slice), when limited. */
  tokens?: number;
  override?: Override;
  /** A receiver's: the share of its recent attempts whose reply the classifier could not read. */
  unknownShare?: number;
}

/** A governor rule that only tells (`alert`), tripped lately. */
export interface Alert {
  at: number;
  rule: string;
  scope: string;
  name: string;
  /** What it saw: the count of its signal, over how many, and their ratio. */
  signal?: string;
  count?: number;
  volume?: number;
  ratio?: number;
}

/** A queue as the status shows it. */
export interface QueueStatus {
  /** The BullMQ queue name, e.g. `{intake-critical}`, `dispatch-low-{b32.76}`, `{campaign-spring}`. */
  queue: string;
  kind: 'intake' | 'dispatch' | 'campaign';
  priority?: PriorityClass;
  campaignId?: string;
  waiting: number;
  delayed: number;
  active: number;
  /** Age of the oldest job not yet done (ms), 0 when empty. */
  oldestAgeMs: number;
  /** Memory of its jobs, estimated from a sample of up to 13 of them (bytes). */
  bytes?: number;
}

/** The fleet at a glance: what the dashboard, the CLI's `status` and `/metrics` show. */
export interface StatusSnapshot {
  at: number;
  /**
   * The processes whose heartbeat is live under the prefix (role, version, schema), the
   * providers that send to the local sandbox, and the messages accepted while no scheduler ran.
   */
  fleet: FleetView;
  keys: KeyStatus[];
  queues: QueueStatus[];
  /**
   * Admissible work by IP pool: messages in the dispatch queues a worker could take now or
   * within their class's horizon (waiting, active, and delayed until then). What workers scale
   * on (`sluice_admissible_work`); see `admissibleWork`.
   */
  admissible: { pool: string; work: number }[];
  /** Time from accepted by Sluice to accepted by the provider, per class, over recent sends (ms). */
  latency: Partial<Record<PriorityClass, { p50: number; p95: number; samples: number }>>;
  /**
   * Since the counters began (the deployment's prefix). `recipients` had a final answer
   * (accepted or rejected); `deferredRecipients` were deferred at least once, each counted
   * once; `deferred` (and `retries`) counts deferred attempts.
   */
  outcomes: {
    recipients: number;
    attempts: number;
    accepted: number;
    deferred: number;
    deferredRecipients: number;
    rejected: number;
    retries: number;
    attemptsPerRecipient: number;
  };
  circuits: { name: string; state: 'open' | 'half-open'; untilMs: number }[];
  /** The governor's alerts of the last 15 minutes, newest first (`sluice replies unknown` for rule unknown-replies). */
  alerts: Alert[];
  overrides: Override[];
  campaigns: {
    id: string;
    name?: string;
    state: 'active' | 'paused' | 'cancelled' | 'done';
    priority?: PriorityClass;
    counts: Record<string, number>;
    /** Its launch decision, if it was launched. */
    launch?: CampaignLaunch;
  }[];
}

/** A campaign's launch decision, in short (`sluice campaigns show` has it all). */
export type CampaignLaunch = LaunchSummary;

/** What `explain` tells of one message. */
export interface Explanation {
  id: string;
  /** The record's state; `unknown` when there is no record. */
  state: string;
  /** One sentence a person can read: sent when and how, or what holds it and until when. */
  summary: string;
  /** While it waits: the layer or setting that holds it, its key, and until when (epoch ms). */
  heldBy?: {
    layer: LayerKind | 'campaign-pause' | 'override' | 'circuit' | 'warmup' | 'provider';
    key: string;
    untilMs?: number;
    reason: string;
  };
  /** The record's fields as stored. */
  record: Record<string, string>;
  attempts: number;
  /** What its campaign's launch holds back (a delay, a held launch, waves, its receiver stopped), if anything. */
  launch?: string;
}
