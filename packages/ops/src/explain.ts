import type { Redis } from 'ioredis';
import {
  dispatchPartitionOf,
  isFinalState,
  jobIdOf,
  receiverFor,
  recipientDomain,
  type Keys,
  type LayerKind,
  type SluiceConfig,
} from '@sluice/core';
import {
  createQueues,
  createStore,
  readCampaignFlags,
  type MessageRecord,
  type Queues,
  type RecordInspection,
  type Store,
} from '@sluice/store';
import { readAdjustment, type AdjustmentFields } from '@sluice/throttle';
import { launchNote } from './explain-launch.js';
import type { Explanation, Override } from './types.js';

/** What {@link explain} needs: the fleet's config, a connection of the caller's and the key builders. */
export interface ExplainOptions {
  config: SluiceConfig;
  /** The queues' Redis (`redis.queues`). */
  redis: Redis;
  /** The limiter's (`redis.limiter`), if it is another. @defaultValue `redis` */
  control?: Redis | undefined;
  keys: Keys;
}

const HELD_BY = new Set<string>([
  'provider',
  'receiver',
  'pool',
  'campaign',
  'tenant',
  'override',
  'circuit',
  'warmup',
  'campaign-pause',
]);

const iso = (ms: number | undefined): string =>
  ms === undefined || ms === 0 ? 'an unknown time' : new Date(ms).toISOString();
const cut = (s: string | undefined, n = 200): string => (s === undefined ? '' : s.length > n ? `${s.slice(0, n)}…` : s);

function finalSummary(r: MessageRecord): string {
  const at = iso(r.finalAt ?? r.updatedAt);
  const via = r.provider ? ` via ${r.provider}` : '';
  switch (r.state) {
    case 'sent':
      return r.lastOutcome === 'ambiguous'
        ? `counted as sent at ${at}${via}: its answer was lost after it was submitted (delivery.onAmbiguous)`
        : `sent at ${at}${via}${r.providerMessageId ? ` (provider id ${r.providerMessageId})` : ''}${r.receiver ? ` to receiver ${r.receiver}` : ''}`;
    case 'rejected':
      return `rejected at ${at}${via}: ${r.lastOutcome ?? 'rejected'}${r.lastReply ? ` — ${cut(r.lastReply)}` : ''}${r.ambiguous > 0 ? ` (an earlier attempt was submitted and never answered: that copy may have arrived)` : ''}`;
    case 'suppressed':
      return `not sent: ${cut(r.lastReply) || 'the recipient is suppressed'} (at ${at})`;
    case 'unconfirmed':
      return `unconfirmed at ${at}${via}: ${r.ambiguous || 'an'} attempt(s) submitted in full and never answered, no attempts left; it may have been delivered${r.lastOutcome ? ` (${cut(r.lastOutcome)})` : ''}`;
    case 'expired':
      return `expired at ${at} without being sent${r.lastReply || r.lastOutcome ? `: ${cut(r.lastReply || r.lastOutcome)}` : ''}`;
    default:
      return `cancelled at ${at}${r.lastReply ? `: ${cut(r.lastReply)}` : ''}`;
  }
}

/** The override in force on any key the message may go through, from the adjustments hash. */
function overrideOn(
  options: ExplainOptions,
  seen: RecordInspection,
  hash: AdjustmentFields,
  now: number,
): { key: string; o: Override } | undefined {
  const { config, keys } = options;
  const { record: r, held } = seen;
  const receiver = receiverFor(config, recipientDomain(r.to));
  const provider = r.provider || config.defaultProvider;
  const candidates: [LayerKind, string][] = [
    // The scheduler's note names the receiver it resolved (an organisation); config names the rest.
    ['receiver', held?.by === 'receiver' && held.key ? held.key : receiver.name],
    ['receiver', recipientDomain(r.to)],
    ['provider', provider],
    ['pool', config.providers[provider]?.pool ?? 'default'],
    ['tenant', r.tenantId],
  ];
  if (r.campaignId) candidates.push(['campaign', r.campaignId]);
  for (const [scope, name] of candidates) {
    // A field nobody can read holds nothing.
    const o = readAdjustment(hash, 'override', keys.bucket(scope, name));
    if (o !== undefined && o.untilMs > now && o.kind !== 'rate') return { key: `${scope}:${name}`, o };
  }
  return undefined;
}

/**
 * Tells what happened to a message, or what holds it and until when: the record's final
 * state with its reply, or, while it waits, the campaign's pause, the hold the scheduler
 * noted on the record (a quota layer, an override, a circuit, a warm-up cap, routing), or an
 * override in force on its keys. An unknown id says so.
 */
export async function explain(options: ExplainOptions, id: string): Promise<Explanation> {
  const { explanation: e, record: r } = await explainRecord(options, id);
  if (!r?.campaignId || !r.to || isFinalState(r.state)) return e;
  // A delayed, held or stopped launch says so too: it holds back the campaign's recipients.
  const note = await launchNote(options.redis, options.keys, r.campaignId, r.to, Date.now());
  return note === undefined ? e : { ...e, summary: `${e.summary}; ${note}`, launch: note };
}

/** Runs `fn` with BullMQ queue handles of its own, closed after. */
async function withQueues<T>(options: ExplainOptions, fn: (queues: Queues) => Promise<T>): Promise<T> {
  const queues = createQueues({
    redis: options.redis,
    keys: options.keys,
    partitions: options.config.redis.dispatchPartitions,
  });
  try {
    return await fn(queues);
  } finally {
    await queues.close();
  }
}

/**
 * Whether an active record's message is admitted: its job (`jobIdOf`, the record's `hop`)
 * waits in its class's dispatch queue. Admission writes no record; the worker's mark does.
 */
function admitted(options: ExplainOptions, seen: RecordInspection): Promise<boolean> {
  const jobId = jobIdOf({ id: seen.record.id, hop: seen.hop });
  return withQueues(options, async (q) => (await q.dispatchOf(seen.record).getJobState(jobId)) !== 'unknown');
}

/** A compact record's fields, as `explain` shows them. */
function compactFields(compact: MessageRecord): Record<string, string> {
  return Object.fromEntries(
    Object.entries({
      state: compact.state,
      campaignId: compact.campaignId,
      provider: compact.provider,
      providerMessageId: compact.providerMessageId,
      finalAt: compact.finalAt === undefined ? undefined : String(compact.finalAt),
      lastOutcome: compact.lastOutcome,
    }).filter((e): e is [string, string] => e[1] !== undefined),
  );
}

/** A message without a full record: compacted once its outcome was acknowledged, or unknown. */
async function explainAbsent(options: ExplainOptions, store: Store, id: string): Promise<Explanation> {
  // Compacted once every outcome group acknowledged it (delivery.retention: compact).
  const stored = await store.get(id);
  if (stored?.compact) {
    const compact = { ...stored, lastOutcome: stored.ambiguous > 0 ? 'ambiguous' : undefined };
    const summary = `${finalSummary(compact)} (compact record: its outcome was acknowledged; address, reply and attempts not kept)`;
    return { id, state: compact.state, summary, record: compactFields(compact), attempts: 0 };
  }
  const days = Math.round(options.config.delivery.recordTtlSeconds / 86_400);
  return {
    id,
    state: 'unknown',
    summary: `no message ${id}: it was never accepted, or its record expired (records are kept ${days} days after their final state)`,
    record: {},
    attempts: 0,
  };
}

async function explainRecord(
  options: ExplainOptions,
  id: string,
): Promise<{ explanation: Explanation; record?: MessageRecord }> {
  const { config, redis, keys } = options;
  const store = createStore({ redis, keys, recordTtlSeconds: config.delivery.recordTtlSeconds });
  const [seen, log] = await Promise.all([store.inspect(id), store.attempts(id)]);
  if (seen === null) return { explanation: await explainAbsent(options, store, id) };
  const { record } = seen;
  const attempts = Math.max(record.attempts, log.length);
  const base = { id, state: record.state, record: seen.fields, attempts };
  if (isFinalState(record.state)) return { explanation: { ...base, summary: finalSummary(record) }, record };
  if (record.state === 'sending' || record.state === 'submitted') {
    const summary = `being sent now${record.provider ? ` via ${record.provider}` : ''} (attempt ${attempts})`;
    return { explanation: { ...base, summary }, record };
  }
  const waiting = await explainWaiting(options, seen, attempts);
  return { explanation: { ...base, ...waiting }, record };
}

/** What an explanation says of a waiting message: its summary and what holds it. */
type Holding = Pick<Explanation, 'summary' | 'heldBy'>;

/** A message not final and not being sent: what holds it, most binding first. */
async function explainWaiting(options: ExplainOptions, seen: RecordInspection, attempts: number): Promise<Holding> {
  const { redis, keys, config } = options;
  const { record } = seen;
  const now = Date.now();
  const [campaign, hash] = await Promise.all([
    record.campaignId ? readCampaignFlags(redis, keys, [record.campaignId]).then(([c]) => c) : undefined,
    (options.control ?? redis).hgetall(keys.adjustments()),
  ]);
  // A paused campaign holds every message of it, admitted or not (the workers give admitted
  // ones back): whatever else was noted, this is what holds it now.
  if (record.campaignId && campaign?.paused) return pausedCampaign(record.campaignId, campaign.cancelled, hash);
  const override = overrideOn(options, seen, hash, now);
  if (record.state === 'dispatched' || (await admitted(options, seen))) {
    if (override?.o.kind === 'suspend') {
      const reason = `suspend by ${override.o.actor}: ${override.o.reason}`;
      return {
        summary: `admitted, but ${override.key} is suspended until ${iso(override.o.untilMs)}: it goes back to admission (${reason})`,
        heldBy: { layer: 'override', key: override.key, untilMs: override.o.untilMs, reason },
      };
    }
    return {
      summary: `admitted; waiting in ${keys.dispatchQueue(record.priority, dispatchPartitionOf(record.id, config.redis.dispatchPartitions), config.redis.dispatchPartitions)} for its slot and a worker${record.provider ? ` (${record.provider})` : ''}`,
    };
  }
  // Waiting for admission (queued or retrying): the scheduler's note says why, when it has one.
  const { held } = seen;
  if (held && HELD_BY.has(held.by)) {
    const layer = held.by as NonNullable<Explanation['heldBy']>['layer'];
    const when =
      held.untilMs > now
        ? `until ${iso(held.untilMs)}`
        : `until ${iso(held.untilMs)} (over: it is being admitted again)`;
    return {
      summary: `waiting: held by ${layer} ${held.key} ${when}${held.reason ? ` — ${held.reason}` : ''}`,
      heldBy: { layer, key: held.key, untilMs: held.untilMs, reason: held.reason },
    };
  }
  if (override) {
    const reason = `${override.o.kind} by ${override.o.actor}: ${override.o.reason}`;
    return {
      summary: `waiting: override on ${override.key} until ${iso(override.o.untilMs)} (${reason})`,
      heldBy: { layer: 'override', key: override.key, untilMs: override.o.untilMs, reason },
    };
  }
  if (record.state === 'retrying') {
    const at = seen.retryAt ? ` at ${iso(seen.retryAt)}` : '';
    return {
      summary: `retrying${at} after attempt ${attempts}: ${record.lastOutcome ?? 'temporary failure'}${record.lastReply ? ` — ${cut(record.lastReply)}` : ''}`,
    };
  }
  return waitingForAdmission(options, record, now);
}

/** A paused (or cancelled) campaign's hold, with the governor's rule and end when it paused it. */
function pausedCampaign(campaignId: string, cancelled: boolean, hash: AdjustmentFields): Holding {
  const governed = readAdjustment(hash, 'campaignPause', campaignId);
  const untilMs = governed?.untilMs;
  const reason = cancelled
    ? 'campaign cancelled'
    : governed !== undefined
      ? `campaign paused by the governor (${governed.rule})`
      : 'campaign paused';
  return {
    summary: `waiting: ${reason}${untilMs ? ` until ${iso(untilMs)}` : ' until it is resumed'}`,
    heldBy: { layer: 'campaign-pause', key: campaignId, ...(untilMs ? { untilMs } : {}), reason },
  };
}

/** Nothing noted: a campaign-wide hold on its queue, or simply its turn in the queue. */
async function waitingForAdmission(options: ExplainOptions, record: MessageRecord, now: number): Promise<Holding> {
  // A campaign queue held by a campaign-wide layer holds every message in it, noted or not.
  if (record.campaignId) {
    const ttl = await withQueues(options, (q) => q.named(record.queue).getRateLimitTtl());
    if (ttl > 0) {
      const reason = 'its campaign queue is held by a campaign-wide limit';
      return {
        summary: `waiting: ${reason} until ${iso(now + ttl)}`,
        heldBy: { layer: 'campaign', key: record.campaignId, untilMs: now + ttl, reason },
      };
    }
  }
  const lastOutcome = record.lastOutcome ? ` (given back by a worker: ${cut(record.lastOutcome, 100)})` : '';
  return { summary: `waiting in ${record.queue} for admission${lastOutcome}` };
}
