import type { SluiceConfig } from '@sluice/core';
import type { LaunchChecks, LaunchDecision, LaunchLimit, LaunchReceiver, LaunchWave } from '@sluice/store';

/** One receiving organisation of a forecast, with the limits of its own. */
export interface ProjectedReceiver {
  receiver: string;
  domains: string[];
  count: number;
  /** Its own limits (receiver rate × factor, a warm-up day cap): the lowest binds. */
  own: LaunchLimit[];
  /** An open circuit of it on the route: nothing goes before then. */
  circuitUntilMs?: number;
}

/** What a launch is decided on: every input already read, so this is pure. */
export interface ProjectionInput {
  now: number;
  total: number;
  receivers: ProjectedReceiver[];
  /** Limits every receiver shares (provider, pool, campaign, tenant, quota), each as the campaign's share of it. */
  shared: LaunchLimit[];
  /** The class lifetime, and the campaign's own expiry if it has one (epoch ms). */
  lifetimeMs: number;
  expiresAt?: number;
  /** Every provider of the route is paused (out of quota) until then. */
  pausedUntilMs?: number;
  checks: LaunchChecks;
  settings: SluiceConfig['launch'];
}

/** A decision before it is stamped with its time, decider and approval. */
export type Projected = Omit<LaunchDecision, 'decidedAt' | 'decidedBy' | 'approval'>;

/** Receivers kept in a stored decision (the latest first). */
const KEEP = 50;

const iso = (ms: number): string => (Number.isFinite(ms) ? new Date(ms).toISOString() : 'never');
const perSecond = (r: number): string => (r >= 10 ? r.toFixed(0) : r.toPrecision(2));

/**
 * Shares the campaign's pace between receivers as the scheduler does: a receiver over its
 * own limit waits in its own line while the others go on, so the shared limit is split in
 * proportion to the counts among the receivers their own limits do not bind (water-filling).
 * Receivers bound by the shared limit then all finish together; the others at their own pace.
 */
export function shareRates(
  receivers: readonly ProjectedReceiver[],
  shared: LaunchLimit,
): { receiver: ProjectedReceiver; rate: number; binds: LaunchLimit }[] {
  const ownOf = (r: ProjectedReceiver): LaunchLimit | undefined =>
    r.own.reduce<LaunchLimit | undefined>((low, l) => (low === undefined || l.rate < low.rate ? l : low), undefined);
  const sorted = receivers
    .filter((r) => r.count > 0)
    .map((r) => ({ r, own: ownOf(r) }))
    .sort((a, b) => (a.own?.rate ?? Infinity) / a.r.count - (b.own?.rate ?? Infinity) / b.r.count);
  let rate = shared.rate;
  let count = sorted.reduce((n, x) => n + x.r.count, 0);
  const out: { receiver: ProjectedReceiver; rate: number; binds: LaunchLimit }[] = [];
  for (const { r, own } of sorted) {
    const fair = (rate * r.count) / count;
    if (own !== undefined && own.rate < fair) {
      out.push({ receiver: r, rate: own.rate, binds: own });
      rate -= own.rate;
    } else {
      out.push({ receiver: r, rate: fair, binds: { ...shared, rate: fair } });
      rate -= fair; // the water level stays the same for the rest
    }
    count -= r.count;
  }
  return out;
}

/** Each receiver's finish, latest first, from `startAt`. */
export function projectReceivers(input: ProjectionInput, startAt: number, deadline: number): LaunchReceiver[] {
  const shared = bindingShared(input.shared);
  return shareRates(input.receivers, shared)
    .map(({ receiver: r, rate, binds }): LaunchReceiver => {
      const from = Math.max(startAt, r.circuitUntilMs ?? 0);
      const finishAt = rate > 0 ? Math.ceil(from + (r.count / rate) * 1000) : Infinity;
      return {
        receiver: r.receiver,
        domains: r.domains.slice(0, 20),
        count: r.count,
        rate,
        binds,
        finishAt,
        late: finishAt > deadline,
        ...(r.circuitUntilMs !== undefined ? { circuitUntilMs: r.circuitUntilMs } : {}),
      };
    })
    .sort((a, b) => b.finishAt - a.finishAt || b.count - a.count);
}

/** The shared limit that binds: the lowest. */
export function bindingShared(shared: readonly LaunchLimit[]): LaunchLimit {
  const low = shared.reduce<LaunchLimit | undefined>((m, l) => (m === undefined || l.rate < m.rate ? l : m), undefined);
  return low ?? { limit: 'provider', key: '-', rate: Infinity, detail: 'no limit' };
}

/** The waves of a split: `k` equal shares, each starting when the slowest receiver ends the one before. */
export function wavesOf(total: number, k: number, startAt: number, spanMs: number): LaunchWave[] {
  const waves: LaunchWave[] = [];
  let upTo = 0;
  for (let i = 0; i < k; i++) {
    const count = Math.floor(total / k) + (i < total % k ? 1 : 0);
    upTo += count;
    waves.push({ atMs: Math.round(startAt + i * spanMs), count, share: count / total, upTo });
  }
  return waves;
}

function lateReason(r: LaunchReceiver, deadline: number): string {
  return (
    `${r.receiver}'s last of ${r.count} recipients would go at ${iso(r.finishAt)}, after the deadline ${iso(deadline)}` +
    ` (${perSecond(r.rate)}/s, bound by ${r.binds.limit} ${r.binds.key}: ${r.binds.detail})`
  );
}

/** The checks besides the rates, in order: storage, the suppression feed, circuits. */
function checkFirst(input: ProjectionInput): Pick<Projected, 'kind' | 'rule' | 'reason' | 'untilMs'> | undefined {
  const { checks, settings, now } = input;
  const pct = (x: number): string => `${(x * 100).toFixed(1)}%`;
  const used = `Redis uses ${pct(checks.storage.share)} of its ${checks.storage.source === 'maxmemory' ? 'maxmemory' : 'budget (launch.storage.budgetBytes)'}`;
  if (checks.storage.share >= settings.storage.rejectAbove)
    return {
      kind: 'reject',
      rule: 'storage-critical',
      reason: `${used}, at or above ${pct(settings.storage.rejectAbove)}`,
    };
  if (checks.storage.share >= settings.storage.holdAbove)
    return {
      kind: 'held',
      rule: 'storage-high',
      reason: `${used}, at or above ${pct(settings.storage.holdAbove)}: held until there is room`,
    };
  const stale = Object.entries(checks.feed).filter(([, age]) => age !== null && age > settings.feedMaxAgeMs);
  if (stale.length > 0)
    return {
      kind: 'held',
      rule: 'feed-stale',
      reason: `the suppression feed is stale: no event applied from ${stale.map(([p, age]) => `${p} for ${Math.round(age! / 1000)} s`).join(', ')}`,
    };
  if (checks.circuits.share >= settings.materialShare) {
    const until = Math.max(
      ...input.receivers.flatMap((r) => (r.circuitUntilMs !== undefined ? [r.circuitUntilMs] : [now])),
    );
    return {
      kind: 'held',
      rule: 'circuit',
      untilMs: until,
      reason: `open circuits at ${checks.circuits.receivers.join(', ')} cover ${pct(checks.circuits.share)} of the forecast (material: ${pct(settings.materialShare)}): held until ${iso(until)}`,
    };
  }
  return undefined;
}

/**
 * Decides a launch: storage critical → reject; storage high, a stale suppression feed, or
 * open circuits over a material share of the forecast → held; then the projection at the
 * rates in force: every receiver done before the deadline → accept (or delay, while every
 * provider of the route is paused); one past it → reject or split (`launch.onPastExpiry`),
 * a split into the fewest equal waves whose slowest receiver finishes each within the lifetime.
 */
export function decideLaunch(input: ProjectionInput): Projected {
  const startAt = Math.max(input.now, input.pausedUntilMs ?? 0);
  const deadline = Math.min(startAt + input.lifetimeMs, input.expiresAt ?? Infinity);
  const receivers = projectReceivers(input, startAt, deadline);
  const base = {
    startAt,
    deadline,
    shared: bindingShared(input.shared),
    receivers: receivers.slice(0, KEEP),
    receiverCount: receivers.length,
    checks: input.checks,
  };
  const first = checkFirst(input);
  if (first) return { ...base, ...first };
  const late = receivers.filter((r) => r.late);
  const delayed = startAt > input.now;
  if (late.length === 0)
    return delayed
      ? {
          ...base,
          kind: 'delay',
          rule: 'provider-paused',
          untilMs: startAt,
          reason: `every provider of the route is paused until ${iso(startAt)}`,
        }
      : {
          ...base,
          kind: 'accept',
          rule: 'fits',
          reason: `every receiver finishes by ${iso(receivers[0]?.finishAt ?? startAt)}, before ${iso(deadline)}`,
        };
  const worst = late[0]!;
  const why = `${lateReason(worst, deadline)}${late.length > 1 ? ` (and ${late.length - 1} more receivers)` : ''}`;
  if (input.settings.onPastExpiry === 'reject') return { ...base, kind: 'reject', rule: 'past-expiry', reason: why };
  const spanMs = Math.max(...receivers.map((r) => (r.count / r.rate) * 1000));
  const windowMs = deadline - startAt;
  const k = Math.max(2, Math.ceil(spanMs / windowMs));
  if (input.expiresAt !== undefined && startAt + spanMs > input.expiresAt)
    return {
      ...base,
      kind: 'reject',
      rule: 'past-expiry',
      reason: `${why}; waves cannot help: the campaign expires at ${iso(input.expiresAt)}`,
    };
  if (k > input.settings.maxWaves)
    return {
      ...base,
      kind: 'reject',
      rule: 'too-many-waves',
      reason: `${why}; it would take ${k} waves, more than launch.maxWaves ${input.settings.maxWaves}`,
    };
  const waves = wavesOf(input.total, k, startAt, spanMs / k);
  return {
    ...base,
    kind: 'split',
    rule: 'past-expiry',
    ...(delayed ? { untilMs: startAt } : {}),
    waves,
    reason: `${why}: split into ${k} waves ${Math.round(spanMs / k / 1000)} s apart`,
  };
}
