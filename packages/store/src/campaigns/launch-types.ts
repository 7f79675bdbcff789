// The stored form of a campaign's launch (`keys.launch(id)`, fields `record` and `gate`):
// written by `campaigns.launch` (the request), the scheduler's governor leader (the decision
// and its re-checks) and `campaigns.approve`. Stored data outlives deployments: fields are
// only ever added.

/** What a launch can be decided as. */
export const LAUNCH_KINDS = ['accept', 'delay', 'split', 'reject', 'held'] as const;
/** A launch decision's kind: `held` waits for a condition (a circuit, storage, the feed), `delay` for a time. */
export type LaunchKind = (typeof LAUNCH_KINDS)[number];

/** The forecast a launch is decided on: recipients per recipient domain (a sample already scaled to `total`). */
export interface LaunchForecast {
  total: number;
  domains: Record<string, number>;
  /** Set when the caller gave a sample: how many recipients it counted. */
  sampleTotal?: number;
}

/** A limit that bounds a receiver's pace, as the projection names it. */
export interface LaunchLimit {
  /** `provider`, `receiver`, `pool`, `campaign`, `tenant` (rate × factor), `quota` (ESP daily quota), `warmup` (day cap). */
  limit: 'provider' | 'receiver' | 'pool' | 'campaign' | 'tenant' | 'quota' | 'warmup';
  /** Its key: a provider id, receiver name, pool, campaign id or tenant. */
  key: string;
  /** Recipients per second it allows this receiver (a share of it, for a shared limit). */
  rate: number;
  /** How it was derived, for a person: `50/s × 0.25 (governor)`. */
  detail: string;
}

/** One receiving organisation's projection. */
export interface LaunchReceiver {
  receiver: string;
  /** Its recipient domains in the forecast (the first 20). */
  domains: string[];
  count: number;
  /** Recipients per second it is projected to get. */
  rate: number;
  /** The limit that binds it. */
  binds: LaunchLimit;
  /** When its last recipient would be sent (epoch ms). */
  finishAt: number;
  /** After the deadline (the class lifetime or the campaign's expiry). */
  late: boolean;
  /** An open circuit of this receiver on the route, until when. */
  circuitUntilMs?: number;
}

/** One wave of a split: recipients at positions below `upTo` may be injected from `atMs`. */
export interface LaunchWave {
  atMs: number;
  count: number;
  share: number;
  upTo: number;
}

/** What the decider checked besides the rates. */
export interface LaunchChecks {
  storage: { usedBytes: number; budgetBytes: number; share: number; source: 'maxmemory' | 'budget' };
  /** Age (ms) of the last applied ESP event per provider of the route; null: never heard from. */
  feed: Record<string, number | null>;
  /** The share of the forecast whose receivers have an open circuit, and which. */
  circuits: { share: number; receivers: string[] };
}

/** The decision of a launch, with what it was decided on. */
export interface LaunchDecision {
  kind: LaunchKind;
  /** The rule that decided: `fits`, `past-expiry`, `too-many-waves`, `circuit`, `storage-high`, `storage-critical`, `feed-stale`, `provider-paused`, `approved`. */
  rule: string;
  /** One sentence for a person. */
  reason: string;
  decidedAt: number;
  /** The scheduler (governor leader) that decided. */
  decidedBy: string;
  /** `delay` and `held`: until when (held without one: until the condition clears, re-checked). */
  untilMs?: number;
  waves?: LaunchWave[];
  /** `not-needed` (accept, reject, held), `required` (a delay or split waiting for an operator), `approved`. */
  approval: 'not-needed' | 'required' | 'approved';
  approvedBy?: string;
  approvedAt?: number;
  approvalReason?: string;
  /** When the first recipient may go and the deadline the receivers are held to (epoch ms). */
  startAt: number;
  deadline: number;
  /** The limit shared by every receiver (provider, pool, campaign, tenant, quota) that binds. */
  shared: LaunchLimit;
  /** The receivers, latest finish first (at most 50; `receiverCount` says how many there were). */
  receivers: LaunchReceiver[];
  receiverCount: number;
  checks: LaunchChecks;
}

/** A receiver the re-check stopped: its recipients are not injected any more. */
export interface LaunchStop {
  reason: string;
  at: number;
  domains: string[];
}

/** A campaign's launch as stored (`campaigns.status(id).launch`). */
export interface LaunchRecord {
  campaignId: string;
  requestedAt: number;
  requestedBy: string;
  /** The stream the campaign's mail goes by (its route). */
  stream: string;
  forecast: LaunchForecast;
  /** Absent while pending: no scheduler has decided yet. */
  decision?: LaunchDecision;
  /** Receivers stopped by a re-check, by receiver name. */
  stopped: Record<string, LaunchStop>;
  /** The last re-check (epoch ms). */
  checkedAt?: number;
}

/**
 * What the injection asks before every chunk (`campaigns.gate`). `open`: inject; with waves,
 * only recipients whose position is below `maxPosition`, the next wave opening at `nextAtMs`;
 * recipients of a `stopped` domain end `expired` with its reason. `wait`: nothing now, ask
 * again at `untilMs`. `refused`: never (rejected, or never launched).
 */
export type LaunchGate =
  | ({ state: 'open' } & { maxPosition?: number; nextAtMs?: number; stopped: Record<string, string> })
  | { state: 'wait'; untilMs: number; reason: string }
  | { state: 'refused'; code: 'campaign_rejected' | 'campaign_not_launched'; reason: string };

/** The gate as stored: waves are judged against the reader's clock, so one write serves every wave. */
export type StoredGate =
  | { s: 'open'; waves?: { atMs: number; upTo: number }[]; stopped: Record<string, string> }
  | { s: 'wait'; untilMs?: number; reason: string }
  | { s: 'refused'; reason: string };

/** A launch in short, as the status snapshot and the dashboard show it (field `summary`). */
export interface LaunchSummary {
  kind: 'pending' | LaunchKind;
  rule?: string;
  reason: string;
  approval?: LaunchDecision['approval'];
  approvedBy?: string;
  waves?: number;
  untilMs?: number;
  /** Receivers the re-check stopped. */
  stopped: string[];
}
