import type { Redis } from 'ioredis';
import {
  isFinalState,
  receiverFor,
  recipientDomain,
  type Keys,
  type LayerKind,
  type PriorityClass,
  type SluiceConfig,
  jobIdOf,
} from '@sluice/core';
import { createQueues, createStore, readCampaignFlags, type Queues } from '@sluice/store';
import { readAdjustment, type AdjustmentFields } from '@sluice/throttle';
import { launchNote } from './explain-launch.js';
import type { Explanation, Override } from './types.js';

/** What {@link explain} needs: the fleet's config, a connection of the caller's and the key builders. */
export interface ExplainOptions {
  config: SluiceConfig;
  redis: Redis;
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

const iso = (ms: number | string | undefined): string =>
  ms === undefined || ms === '' ? 'an unknown time' : new Date(Number(ms)).toISOString();
const cut = (s: string | undefined, n = 200): string => (s === undefined ? '' : s.length > n ? `${s.slice(0, n)}…` : s);

function finalSummary(r: Record<string, string>): string {
  const at = iso(r.finalAt ?? r.updatedAt);
  const via = r.provider ? ` via ${r.provider}` : '';
  switch (r.state) {
    case 'sent':
      return r.lastOutcome === 'ambiguous'
        ? `counted as sent at ${at}${via}: its answer was lost after it was submitted (delivery.onAmbiguous)`
        : `sent at ${at}${via}${r.providerMessageId ? ` (provider id ${r.providerMessageId})` : ''}${r.receiver ? ` to receiver ${r.receiver}` : ''}`;
    case 'rejected':
      return `rejected at ${at}${via}: ${r.lastOutcome ?? 'rejected'}${r.lastReply ? ` — ${cut(r.lastReply)}` : ''}${Number(r.ambiguous ?? 0) > 0 ? ` (an earlier attempt was submitted and never answered: that copy may have arrived)` : ''}`;
    case 'suppressed':
      return `not sent: ${cut(r.lastReply) || 'the recipient is suppressed'} (at ${at})`;
    case 'unconfirmed':
      return `unconfirmed at ${at}${via}: ${r.ambiguous ?? 'an'} attempt(s) submitted in full and never answered, no attempts left; it may have been delivered${r.lastOutcome ? ` (${cut(r.lastOutcome)})` : ''}`;
    case 'expired':
      return `expired at ${at} without being sent${r.lastReply || r.lastOutcome ? `: ${cut(r.lastReply || r.lastOutcome)}` : ''}`;
    default:
      return `cancelled at ${at}${r.lastReply ? `: ${cut(r.lastReply)}` : ''}`;
  }
}

/** The override in force on any key the message may go through, from the adjustments hash. */
function overrideOn(
  config: SluiceConfig,
  keys: Keys,
  r: Record<string, string>,
  hash: AdjustmentFields,
  now: number,
): { key: string; o: Override } | undefined {
  const receiver = receiverFor(config, recipientDomain(r.to ?? ''));
  const provider = r.provider || config.defaultProvider;
  const candidates: [LayerKind, string][] = [
    // The scheduler's note names the receiver it resolved (an organisation); config names the rest.
    ['receiver', r.heldBy === 'receiver' && r.heldKey ? r.heldKey : receiver.name],
    ['receiver', recipientDomain(r.to ?? '')],
    ['provider', provider],
    ['pool', config.providers[provider]?.pool ?? 'default'],
    ['tenant', r.tenantId ?? 'default'],
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
  const e = await explainRecord(options, id);
  const r = e.record;
  if (!r.campaignId || !r.to || isFinalState(r.state ?? '')) return e;
  // A delayed, held or stopped launch says so too: it holds back the campaign's recipients.
  const note = await launchNote(options.redis, options.keys, r.campaignId, r.to, Date.now());
  return note === undefined ? e : { ...e, summary: `${e.summary}; ${note}`, launch: note };
}

/** Runs `fn` with BullMQ queue handles of its own, closed after. */
async function withQueues<T>(options: ExplainOptions, fn: (queues: Queues) => Promise<T>): Promise<T> {
  const queues = createQueues({ redis: options.redis, keys: options.keys });
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
function admitted(
  options: ExplainOptions,
  id: string,
  record: Record<string, string>,
  priority: PriorityClass,
): Promise<boolean> {
  const jobId = jobIdOf({ id, hop: Number(record.hop ?? 0) });
  return withQueues(options, async (q) => (await q.dispatch(priority).getJobState(jobId)) !== 'unknown');
}

async function explainRecord(options: ExplainOptions, id: string): Promise<Explanation> {
  const { config, redis, keys } = options;
  const store = createStore({ redis, keys, recordTtlSeconds: config.delivery.recordTtlSeconds });
  const [record, log] = await Promise.all([store.fields(id), store.attempts(id)]);
  if (!record.state) {
    // Compacted once every outcome group acknowledged it (delivery.retention: compact).
    const compact = await store.get(id);
    if (compact?.compact) {
      const kept = Object.fromEntries(
        Object.entries({
          state: compact.state,
          campaignId: compact.campaignId,
          provider: compact.provider,
          providerMessageId: compact.providerMessageId,
          finalAt: String(compact.finalAt),
          lastOutcome: compact.ambiguous > 0 ? 'ambiguous' : undefined,
        }).filter((e): e is [string, string] => e[1] !== undefined),
      );
      const summary = `${finalSummary(kept)} (compact record: its outcome was acknowledged; address, reply and attempts not kept)`;
      return { id, state: compact.state, summary, record: kept, attempts: 0 };
    }
    const days = Math.round(config.delivery.recordTtlSeconds / 86_400);
    return {
      id,
      state: 'unknown',
      summary: `no message ${id}: it was never accepted, or its record expired (records are kept ${days} days after their final state)`,
      record: {},
      attempts: 0,
    };
  }
  const attempts = Math.max(Number(record.attempts ?? 0), log.length);
  const base = { id, state: record.state, record, attempts };
  if (isFinalState(record.state ?? '')) return { ...base, summary: finalSummary(record) };

  const now = Date.now();
  const priority = (record.priority ?? 'normal') as PriorityClass;
  if (record.state === 'sending' || record.state === 'submitted') {
    return {
      ...base,
      summary: `being sent now${record.provider ? ` via ${record.provider}` : ''} (attempt ${attempts})`,
    };
  }

  const [campaign, hash] = await Promise.all([
    record.campaignId ? readCampaignFlags(redis, keys, [record.campaignId]).then(([c]) => c) : undefined,
    redis.hgetall(keys.adjustments()),
  ]);
  // A paused campaign holds every message of it, admitted or not (the workers give admitted
  // ones back): whatever else was noted, this is what holds it now.
  if (record.campaignId && campaign?.paused) {
    const governed = readAdjustment(hash, 'campaignPause', record.campaignId);
    const untilMs = governed?.untilMs;
    const reason = campaign.cancelled
      ? 'campaign cancelled'
      : governed !== undefined
        ? `campaign paused by the governor (${governed.rule})`
        : 'campaign paused';
    return {
      ...base,
      summary: `waiting: ${reason}${untilMs ? ` until ${iso(untilMs)}` : ' until it is resumed'}`,
      heldBy: { layer: 'campaign-pause', key: record.campaignId, ...(untilMs ? { untilMs } : {}), reason },
    };
  }
  const override = overrideOn(config, keys, record, hash, now);
  if (record.state === 'dispatched' || (await admitted(options, id, record, priority))) {
    if (override?.o.kind === 'suspend') {
      const reason = `suspend by ${override.o.actor}: ${override.o.reason}`;
      return {
        ...base,
        summary: `admitted, but ${override.key} is suspended until ${iso(override.o.untilMs)}: it goes back to admission (${reason})`,
        heldBy: { layer: 'override', key: override.key, untilMs: override.o.untilMs, reason },
      };
    }
    return {
      ...base,
      summary: `admitted; waiting in ${keys.dispatchQueue(priority)} for its slot and a worker${record.provider ? ` (${record.provider})` : ''}`,
    };
  }

  // Waiting for admission (queued or retrying): the scheduler's note says why, when it has one.
  if (record.heldBy && HELD_BY.has(record.heldBy)) {
    const untilMs = Number(record.heldUntil);
    const layer = record.heldBy as NonNullable<Explanation['heldBy']>['layer'];
    const key = record.heldKey ?? '';
    const reason = record.heldReason ?? '';
    const when = untilMs > now ? `until ${iso(untilMs)}` : `until ${iso(untilMs)} (over: it is being admitted again)`;
    return {
      ...base,
      summary: `waiting: held by ${layer} ${key} ${when}${reason ? ` — ${reason}` : ''}`,
      heldBy: { layer, key, untilMs, reason },
    };
  }
  if (override) {
    const reason = `${override.o.kind} by ${override.o.actor}: ${override.o.reason}`;
    return {
      ...base,
      summary: `waiting: override on ${override.key} until ${iso(override.o.untilMs)} (${reason})`,
      heldBy: { layer: 'override', key: override.key, untilMs: override.o.untilMs, reason },
    };
  }
  if (record.state === 'retrying') {
    const at = record.retryAt ? ` at ${iso(record.retryAt)}` : '';
    return {
      ...base,
      summary: `retrying${at} after attempt ${attempts}: ${record.lastOutcome ?? 'temporary failure'}${record.lastReply ? ` — ${cut(record.lastReply)}` : ''}`,
    };
  }
  // A campaign queue held by a campaign-wide layer holds every message in it, noted or not.
  const queueName = record.campaignId ? keys.campaignQueue(record.campaignId) : keys.intakeQueue(priority);
  if (record.campaignId) {
    const ttl = await withQueues(options, (q) => q.named(queueName).getRateLimitTtl());
    if (ttl > 0) {
      const reason = 'its campaign queue is held by a campaign-wide limit';
      return {
        ...base,
        summary: `waiting: ${reason} until ${iso(now + ttl)}`,
        heldBy: { layer: 'campaign', key: record.campaignId, untilMs: now + ttl, reason },
      };
    }
  }
  const lastOutcome = record.lastOutcome ? ` (given back by a worker: ${cut(record.lastOutcome, 100)})` : '';
  return { ...base, summary: `waiting in ${queueName} for admission${lastOutcome}` };
}
