import type { Redis } from 'ioredis';
import { SluiceError, type Keys } from '@sluice/core';
import { createLaunchStore, noScheduler, parseForecast, type LaunchStore } from './launch-store.js';
import type { LaunchRecord } from './launch-types.js';
import { campaignArchivedError } from './archive.js';
import { markWork } from './work.js';
import { CAMPAIGN_FLAGS } from './codec.js';
import { readCampaignFields } from './read.js';

const NAME = /^[A-Za-z0-9_-]{1,64}$/;
/** The audit stream is capped near this many entries (as the overrides' writers). */
const AUDIT_MAXLEN = 100_000;

/** Options of `campaigns.launch`. */
export interface LaunchOptions {
  /** Who launches (stored with the request). @defaultValue `'unknown'` */
  actor?: string;
  /**
   * The stream the campaign's mail goes by: its route decides the providers projected.
   * @defaultValue its content's `stream`, else `'transactional'`
   */
  stream?: string;
  /** How long to wait for a scheduler's decision before `no_scheduler`. @defaultValue `10_000` */
  timeoutMs?: number;
  /** How often the decision is looked for meanwhile. @defaultValue `100` */
  pollMs?: number;
}

/** Options of `campaigns.approve`. */
export interface ApproveOptions {
  /** Who approves (audited). */
  actor: string;
  /** Why (audited). */
  reason: string;
}

interface Deps {
  redis: Redis;
  keys: Keys;
  launches?: LaunchStore;
}

const invalid = (path: string, message: string): SluiceError =>
  new SluiceError('invalid_argument', `launch ${path}: ${message}`, { path });

const refused = (id: string, message: string): SluiceError =>
  new SluiceError('approval_refused', `campaign ${id}: ${message}`, { path: 'campaignId' });

/**
 * Stores a launch request (`decision` pending) and waits for the governor leader's decision.
 * The forecast is checked before anything is read. A campaign whose launch is decided (and
 * not rejected) is refused with `campaign_launched`; a rejected one may be launched again
 * with a new forecast. No decision within `timeoutMs`: `no_scheduler` (the request stays
 * stored and is decided when a scheduler runs).
 */
export async function launchCampaign(
  deps: Deps,
  id: string,
  forecastInput: unknown,
  options: LaunchOptions = {},
): Promise<LaunchRecord> {
  const forecast = parseForecast(forecastInput);
  if (options.stream !== undefined && !NAME.test(options.stream))
    throw invalid('stream', 'must match [A-Za-z0-9_-]{1,64}');
  const timeoutMs = options.timeoutMs ?? 10_000;
  if (!Number.isFinite(timeoutMs) || timeoutMs < 0) throw invalid('timeoutMs', 'must be a number of ms, 0 or more');
  const { redis, keys } = deps;
  const store = deps.launches ?? createLaunchStore(redis, keys);
  const flags = await readCampaignFields(redis, keys, id, CAMPAIGN_FLAGS);
  if (!flags.exists) throw new SluiceError('unknown_campaign', `no campaign with id ${id}`, { path: 'campaignId' });
  if (flags.archived) throw campaignArchivedError(id);
  if (flags.cancelled)
    throw new SluiceError('campaign_cancelled', `campaign ${id} was cancelled: it cannot be launched`, {
      path: 'campaignId',
    });
  // The stream its mail goes by: the option, else its content's (`create({ content })`).
  const content = await redis.get(keys.campaignContent(id));
  const stream =
    options.stream ?? (content ? (JSON.parse(content) as { stream?: string }).stream : undefined) ?? 'transactional';
  const existing = await store.read(id);
  if (existing?.record.decision && existing.record.decision.kind !== 'reject')
    throw new SluiceError(
      'campaign_launched',
      `campaign ${id} is launched already (${existing.record.decision.kind}): see sluice campaigns show ${id}`,
      { path: 'campaignId' },
    );
  const record: LaunchRecord = {
    campaignId: id,
    requestedAt: Date.now(),
    requestedBy: (options.actor ?? 'unknown').slice(0, 64),
    stream,
    forecast,
    stopped: {},
  };
  if (!(await store.write(id, existing?.version ?? 0, record)))
    throw new SluiceError('campaign_launched', `campaign ${id}: another launch was written at the same time`, {
      path: 'campaignId',
    });
  // Marked as having work: the schedulers' next poll writes its injection window (their
  // config's), which the producer reads before its first chunk.
  // (And listed among the active campaigns again: a create cut off before its index step.)
  const write = redis.multi().sadd(keys.launches(), id).sadd(keys.campaigns(), id);
  markWork(write, keys, id);
  await write.exec();
  const until = Date.now() + timeoutMs;
  const pollMs = options.pollMs ?? 100;
  for (;;) {
    const now = await store.read(id);
    if (now?.record.decision && now.record.requestedAt === record.requestedAt) return now.record;
    if (Date.now() >= until) throw noScheduler(id, timeoutMs);
    await new Promise((resolve) => setTimeout(resolve, Math.min(pollMs, Math.max(1, until - Date.now()))));
  }
}

/**
 * An operator approves a `delay` or a `split` that waits for approval: it takes effect (a
 * split's waves move on by the time the approval took), with the approver and reason on the
 * decision and an `approve` entry in the audit stream. Anything else is `approval_refused`:
 * a reject (never one for storage), a held launch, one decided already or still pending.
 */
export async function approveLaunch(deps: Deps, id: string, options: ApproveOptions): Promise<LaunchRecord> {
  const actor = typeof options?.actor === 'string' ? options.actor.trim() : '';
  const reason = typeof options?.reason === 'string' ? options.reason.trim() : '';
  if (actor === '' || actor.length > 64) throw invalid('actor', 'is required: who approves (at most 64 characters)');
  if (reason === '' || reason.length > 500) throw invalid('reason', 'is required: why (at most 500 characters)');
  const { redis, keys } = deps;
  const store = deps.launches ?? createLaunchStore(redis, keys);
  for (let attempt = 0; attempt < 5; attempt++) {
    const stored = await store.read(id);
    if (!stored) {
      if (!(await readCampaignFields(redis, keys, id, CAMPAIGN_FLAGS)).exists)
        throw new SluiceError('unknown_campaign', `no campaign with id ${id}`, { path: 'campaignId' });
      throw refused(id, 'it was never launched: nothing to approve');
    }
    const d = stored.record.decision;
    if (!d) throw refused(id, 'its launch is not decided yet: nothing to approve');
    if (d.kind === 'reject')
      throw refused(
        id,
        d.rule === 'storage-critical'
          ? `a storage-critical reject is never approved: ${d.reason}`
          : `a reject is not approved (${d.reason}); launch again with a new forecast`,
      );
    if (d.approval !== 'required') throw refused(id, `nothing awaits approval (${d.kind}, ${d.approval})`);
    const now = Date.now();
    const late = Math.max(0, now - d.decidedAt);
    const decision = {
      ...d,
      approval: 'approved' as const,
      approvedBy: actor,
      approvedAt: now,
      approvalReason: reason,
      ...(d.waves ? { waves: d.waves.map((w) => ({ ...w, atMs: w.atMs + late })) } : {}),
    };
    const record = { ...stored.record, decision };
    if (!(await store.write(id, stored.version, record))) continue;
    await redis.xadd(
      keys.audit(),
      'MAXLEN',
      '~',
      AUDIT_MAXLEN,
      '*',
      ...['action', 'approve', 'at', String(now), 'scope', 'campaign', 'name', id],
      ...['kind', `launch-${d.kind}`, 'actor', actor, 'reason', reason],
    );
    return record;
  }
  throw refused(id, 'its launch kept changing while it was approved: try again');
}
