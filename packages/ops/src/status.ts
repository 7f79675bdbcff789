import type { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import {
  FINAL_STATES,
  PRIORITY_CLASSES,
  campaignOfQueue,
  receiverNamed,
  type Clock,
  type Keys,
  type LayerKind,
  type SluiceConfig,
} from '@sluice/core';
import {
  adjustmentEntries,
  createAdjustments,
  createSignals,
  foldTotals,
  type AdjustmentFields,
  type Adjustments,
  type Signals,
} from '@sluice/throttle';
import { admissibleByPool } from './admissible.js';
import type { Alert, KeyStatus, Override, QueueStatus, StatusSnapshot } from './types.js';
import { createQueues, readFleet, readStoredCampaigns, type LaunchSummary, type StoredCampaign } from '@sluice/store';

/** How far back the status shows the governor's alerts. */
const ALERTS_FOR_MS = 15 * 60_000;

/** Options of {@link createStatus}. */
export interface StatusOptions {
  config: SluiceConfig;
  /** A connection of the caller's to the queues' Redis (`redis.queues`); not closed here. */
  redis: Redis;
  /** One to the limiter's Redis (`redis.limiter`), if it is another. @defaultValue `redis` */
  control?: Redis | undefined;
  keys: Keys;
  /** Seconds of signals the send rate is averaged over (whole buckets). @defaultValue `5` */
  rateWindowSeconds?: number;
  /**
   * What "now" is for a snapshot, epoch ms (tests fix it, so no second boundary passes
   * between writing signals and reading them). @defaultValue Redis `TIME`, the limiter's clock
   */
  clock?: Clock;
}

/** The fleet's status, read from Redis: what the dashboard, the CLI and `/metrics` show. */
export interface Status {
  /** Everything at once (a few dozen round trips, pipelined where it counts). */
  snapshot(): Promise<StatusSnapshot>;
  /** Closes the queue handles (the connection stays the caller's). */
  close(): Promise<void>;
}

interface KeyPlan {
  scope: LayerKind;
  name: string;
  rate?: number | undefined;
  burst?: number | undefined;
}

/** `p`-th percentile (nearest rank) of sorted numbers. */
function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

/**
 * Creates the status reader. Rates, factors, circuits and overrides come from the
 * adjustments hash every process shares; send rates and outcome totals from the signals;
 * tokens from the limiter's buckets (on Redis time); latencies from the workers' samples.
 *
 * Outcome totals are folded from the providers' signal buckets into one hash
 * (`<prefix>:ops:outcomes`, see `foldTotals`) by the governor's leader every tick, and by
 * a reader that finds settled buckets not folded yet; the reader adds what has not settled.
 */
export function createStatus(options: StatusOptions): Status {
  const { config, redis, keys } = options;
  const control = options.control ?? redis;
  const window = options.rateWindowSeconds ?? 5;
  const adjustments: Adjustments = createAdjustments({ redis: control, keys, backpressure: config.backpressure });
  // Read-only here: this instance never records, so its flush timer never writes.
  const signals: Signals = createSignals({ redis: control, keys, flushMs: 60_000 });
  const queues = createQueues({ redis, keys, partitions: config.redis.dispatchPartitions });
  const queue = (name: string): Queue => queues.named(name);
  const share = 1 - config.reserves.critical - config.reserves.high;
  const slackSeconds = config.jitterSlackMs / 1000;

  async function plan(campaignIds: string[], campaigns: Map<string, StoredCampaign>): Promise<KeyPlan[]> {
    const [receivers, tenants] = await Promise.all([signals.active('receiver'), signals.active('tenant')]);
    const out: KeyPlan[] = [];
    for (const [id, p] of Object.entries(config.providers))
      out.push({ scope: 'provider', name: id, rate: p.rate, burst: p.burst });
    for (const name of new Set([...config.receivers.map((r) => r.name), ...receivers])) {
      const r = receiverNamed(config, name);
      out.push({ scope: 'receiver', name, rate: r.rate, burst: r.burst });
    }
    for (const name of new Set([...Object.keys(config.pools), ...Object.values(config.providers).map((p) => p.pool)])) {
      const pool = config.pools[name];
      out.push({ scope: 'pool', name, rate: pool?.rate, burst: pool?.burst });
    }
    for (const id of campaignIds) {
      const c = campaigns.get(id);
      out.push({
        scope: 'campaign',
        name: id,
        rate: c?.rate ?? config.defaults.campaign.rate,
        burst: c?.burst ?? config.defaults.campaign.burst,
      });
    }
    for (const name of new Set(['default', ...tenants]))
      out.push({ scope: 'tenant', name, rate: config.defaults.tenant.rate, burst: config.defaults.tenant.burst });
    return out;
  }

  function overridesOf(hash: AdjustmentFields, now: number): Map<string, Override> {
    // A field nobody can read is no override in force.
    return new Map(adjustmentEntries(hash, 'override').filter(([, o]) => o.untilMs > now));
  }

  async function keyStatuses(
    plans: KeyPlan[],
    overrides: Map<string, Override>,
    nowMs: number,
    nowUs: number,
  ): Promise<KeyStatus[]> {
    const end = signals.bucketOf(nowMs);
    const start = end - window * signals.bucketMs;
    // One pipeline: every bucket is under the limiter's hash tag.
    const tats = control.pipeline();
    for (const k of plans) tats.hget(keys.bucket(k.scope, k.name), '1');
    const [tatReplies, sums] = await Promise.all([
      tats.exec(),
      Promise.all(plans.map((k) => signals.sum({ kind: k.scope, name: k.name }, start, end))),
    ]);
    return plans.map((k, i) => {
      const layerKey = keys.bucket(k.scope, k.name);
      const factor = adjustments.factor(layerKey);
      const override = overrides.get(layerKey);
      // As quotaLayers (packages/throttle/src/layers.ts) has it: a rate override stands in
      // for the configured rate (its burst a tenth of it, never above the configured one),
      // the account's cap bounds a provider, then the factor lowers both.
      let rate = k.rate;
      let burst = k.burst;
      if (override?.kind === 'rate' && override.rate !== undefined) {
        const b = Math.max(1, Math.round(override.rate / 10));
        rate = override.rate;
        burst = burst !== undefined ? Math.min(burst, b) : b;
      }
      const cap = k.scope === 'provider' ? adjustments.cap(k.name) : undefined;
      if (cap !== undefined && rate !== undefined && cap < rate) {
        burst = Math.max(1, Math.min(burst ?? Math.round(cap / 10), Math.floor(cap)));
        rate = cap;
      }
      if (rate !== undefined && factor < 1) {
        burst = Math.max(1, Math.round((burst ?? Math.max(1, Math.round(rate / 10))) * factor));
        rate *= factor;
      }
      const held = override?.kind === 'pause' || override?.kind === 'suspend';
      const status: KeyStatus = {
        scope: k.scope,
        name: k.name,
        factor,
        sendRate: (sums[i]!.attempted ?? 0) / window,
      };
      if (k.rate !== undefined) status.configuredRate = k.rate;
      const attempted = sums[i]!.attempted ?? 0;
      if (k.scope === 'receiver' && attempted > 0)
        status.unknownShare = (sums[i]!['deferred:unknown'] ?? 0) / attempted;
      if (held) status.effectiveRate = 0;
      else if (rate !== undefined) status.effectiveRate = rate;
      if (override) status.override = override;
      if (!held && rate !== undefined && rate > 0) {
        // As the limiter sees the bucket (limiter.ts, admit-n.lua): the shared slice runs at
        // `share` of the rate with its burst less the jitter slack, and takes
        // floor(burst − (TAT − now) / T) sends at once.
        const slotBurst = Math.max(1, (burst ?? Math.max(1, Math.round(rate / 10))) - Math.ceil(rate * slackSeconds));
        const T = 1e6 / rate / share;
        const [err, raw] = tatReplies?.[i] ?? [null, null];
        const tat = err ? nowUs : Math.max(Number(raw ?? 0), nowUs);
        status.tokens = Math.max(0, Math.floor(Math.max(1, slotBurst * share) - (tat - nowUs) / T));
      }
      return status;
    });
  }

  async function queueStatus(
    name: string,
    kind: QueueStatus['kind'],
    extra: Partial<QueueStatus>,
    now: number,
  ): Promise<QueueStatus> {
    const q = queue(name);
    const [counts, oldest] = await Promise.all([
      q.getJobCounts('waiting', 'prioritized', 'delayed', 'active'),
      Promise.all([
        q.getJobs(['waiting'], 0, 0, true),
        q.getJobs(['prioritized'], 0, 0, true),
        q.getJobs(['delayed'], 0, 9, true),
        q.getJobs(['active'], 0, 0, true),
      ]),
    ]);
    const sample = oldest.flat();
    const stamps = sample.map((j) => j.timestamp).filter((t) => Number.isFinite(t) && t > 0);
    const jobs = (counts.waiting ?? 0) + (counts.prioritized ?? 0) + (counts.delayed ?? 0) + (counts.active ?? 0);
    // Bytes are estimated: BullMQ keeps a hash per job, and measuring every one on each read
    // would cost as much as the queue is long. The jobs fetched above are the sample.
    const sizes = await Promise.all(
      sample.map((j) => redis.call('MEMORY', 'USAGE', `${keys.prefix}:${name}:${j.id}`) as Promise<number | null>),
    );
    const measured = sizes.filter((b): b is number => typeof b === 'number');
    return {
      queue: name,
      kind,
      ...extra,
      waiting: (counts.waiting ?? 0) + (counts.prioritized ?? 0),
      delayed: counts.delayed ?? 0,
      active: counts.active ?? 0,
      oldestAgeMs: stamps.length ? Math.max(0, now - Math.min(...stamps)) : 0,
      bytes: measured.length ? Math.round((measured.reduce((a, b) => a + b, 0) / measured.length) * jobs) : 0,
    };
  }

  async function outcomes(now: number): Promise<StatusSnapshot['outcomes']> {
    const providers = [...new Set([...Object.keys(config.providers), ...(await signals.active('provider'))])];
    const { counts, upTo } = await foldTotals({ redis: control, keys, signals }, providers, now);
    // Plus what has not settled yet, so the figures move while mail goes out.
    const recent = await Promise.all(
      providers.map((name) => signals.sum({ kind: 'provider', name }, upTo, signals.bucketOf(now) + signals.bucketMs)),
    );
    for (const r of recent) for (const [f, n] of Object.entries(r)) counts[f] = (counts[f] ?? 0) + n;
    const sumOf = (pred: (f: string) => boolean): number =>
      Object.entries(counts).reduce((n, [f, v]) => (pred(f) ? n + v : n), 0);
    const attempts = counts.attempted ?? 0;
    const accepted = counts.accepted ?? 0;
    const rejected = counts.rejected ?? 0;
    // A provider's own 429 is `throttled` on its key; everything else temporary is `deferred:*`.
    const deferred = (counts.throttled ?? 0) + sumOf((f) => f.startsWith('deferred:'));
    const recipients = accepted + rejected;
    return {
      recipients,
      attempts,
      accepted,
      deferred,
      deferredRecipients: counts.recipient_deferred ?? 0,
      rejected,
      retries: deferred,
      attemptsPerRecipient: recipients > 0 ? attempts / recipients : 0,
    };
  }

  async function latency(): Promise<StatusSnapshot['latency']> {
    const lists = await Promise.all(PRIORITY_CLASSES.map((p) => control.lrange(keys.latency(p), 0, -1)));
    const out: StatusSnapshot['latency'] = {};
    PRIORITY_CLASSES.forEach((p, i) => {
      const sorted = lists[i]!.map(Number)
        .filter(Number.isFinite)
        .sort((a, b) => a - b);
      if (sorted.length > 0)
        out[p] = { p50: percentile(sorted, 50), p95: percentile(sorted, 95), samples: sorted.length };
    });
    return out;
  }

  /** The governor's `alert` decisions of the last 15 minutes, from its log (newest first). */
  async function alerts(now: number): Promise<Alert[]> {
    const since = now - ALERTS_FOR_MS;
    const entries = await control.xrevrange(keys.governorLog(), '+', String(since), 'COUNT', 500);
    return entries.flatMap(([, fields]) => {
      const d = JSON.parse(fields[1] ?? '{}') as {
        at: number;
        rule: string;
        scope: string;
        name: string;
        action: string;
        inputs?: Omit<Alert, 'at' | 'rule' | 'scope' | 'name'>;
      };
      if (d.action !== 'alert') return [];
      const { signal, count, volume, ratio } = d.inputs ?? {};
      return [{ at: d.at, rule: d.rule, scope: d.scope, name: d.name, signal, count, volume, ratio }];
    });
  }

  return {
    async snapshot() {
      const [[sec, usec], hash, campaignIds] = await Promise.all([
        control.time(),
        control.hgetall(keys.adjustments()),
        redis.smembers(keys.campaigns()),
      ]);
      const nowUs = options.clock ? options.clock() * 1000 : Number(sec) * 1e6 + Number(usec);
      const now = Math.floor(nowUs / 1000);
      await adjustments.refresh();
      campaignIds.sort();
      // Side by side, not a pipeline: each campaign's launch is under its own hash tag.
      const [stored, summaries] = await Promise.all([
        readStoredCampaigns(redis, keys, campaignIds),
        Promise.all(campaignIds.map((id) => redis.hget(keys.launch(id), 'summary'))),
      ]);
      const launches = new Map<string, LaunchSummary>();
      for (const [i, raw] of summaries.entries()) {
        if (raw !== null) launches.set(campaignIds[i]!, JSON.parse(raw) as LaunchSummary);
      }
      // Queue handles of campaigns that are gone are closed, not kept forever.
      const live = new Set(campaignIds.map((id) => keys.campaignQueue(id)));
      for (const q of queues.all()) {
        if (campaignOfQueue(q.name) !== undefined && !live.has(q.name)) await queues.drop(q.name);
      }

      const overrides = overridesOf(hash, now);
      const [keyList, queueList, latencies, totals, pausedQueues, admissible] = await Promise.all([
        plan(campaignIds, stored).then((plans) => keyStatuses(plans, overrides, now, nowUs)),
        Promise.all([
          ...PRIORITY_CLASSES.map((p) => queueStatus(keys.intakeQueue(p), 'intake', { priority: p }, now)),
          ...PRIORITY_CLASSES.flatMap((p) =>
            queues.dispatchAll(p).map((q) => queueStatus(q.name, 'dispatch', { priority: p }, now)),
          ),
          ...campaignIds.map((id) => {
            const priority = stored.get(id)?.priority;
            return queueStatus(
              keys.campaignQueue(id),
              'campaign',
              priority ? { campaignId: id, priority } : { campaignId: id },
              now,
            );
          }),
        ]),
        latency(),
        outcomes(now),
        Promise.all(campaignIds.map((id) => queue(keys.campaignQueue(id)).isPaused())),
        admissibleByPool({ redis, keys, config, queues }, now),
      ]);

      const campaigns = campaignIds.map((id, i): StatusSnapshot['campaigns'][number] => {
        const c = stored.get(id);
        const counts: Record<string, number> = {
          ...(c?.counts ?? {
            accepted: 0,
            sent: 0,
            rejected: 0,
            suppressed: 0,
            expired: 0,
            cancelled: 0,
            unconfirmed: 0,
          }),
        };
        const final = FINAL_STATES.reduce((sum, state) => sum + counts[state]!, 0);
        counts.pending = Math.max(0, counts.accepted! - final);
        const paused = c?.paused === true || pausedQueues[i] === true || adjustments.campaignPause(id) !== undefined;
        const state =
          c?.cancelled === true
            ? 'cancelled'
            : paused
              ? 'paused'
              : counts.accepted! > 0 && counts.pending === 0
                ? 'done'
                : 'active';
        const entry: StatusSnapshot['campaigns'][number] = { id, state, counts };
        if (c) {
          entry.name = c.name;
          entry.priority = c.priority;
        }
        const launch = launches.get(id);
        if (launch) entry.launch = launch;
        return entry;
      });

      const circuits = adjustments.circuits().flatMap((name) => {
        const c = adjustments.circuit(name);
        return c
          ? [{ name, state: now < c.untilMs ? ('open' as const) : ('half-open' as const), untilMs: c.untilMs }]
          : [];
      });

      return {
        at: now,
        fleet: await readFleet(redis, keys, now),
        keys: keyList,
        queues: queueList,
        latency: latencies,
        outcomes: totals,
        circuits,
        alerts: await alerts(now),
        overrides: [...overrides.values()],
        campaigns,
        admissible,
      };
    },
    async close() {
      adjustments.close();
      await signals.close();
      await queues.close();
    },
  };
}
