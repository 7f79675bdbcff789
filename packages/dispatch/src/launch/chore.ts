import type { Logger } from 'pino';
import { FINAL_STATES } from '@sluice/core';
import {
  createLaunchStore,
  readStoredCampaign,
  type LaunchDecision,
  type LaunchRecord,
  type StoredCampaign,
  type StoredLaunch,
} from '@sluice/store';
import { readInputs, type AccountQuota, type InputDeps, type LaunchSubject } from './inputs.js';
import { decideLaunch, projectReceivers, type ProjectionInput } from './project.js';

/** Options of {@link createLaunchChore}. */
export interface LaunchChoreOptions extends Omit<InputDeps, 'quotas'> {
  logger: Pick<Logger, 'info' | 'warn'>;
  /** The scheduler's name, stored as the decider. */
  holder: string;
}

/** A chore of the governor leader (`GovernorOptions.chores`). */
export interface LaunchChore {
  name: string;
  run(now: number): Promise<number>;
  /** Keeps an SES account's last reading (`watchQuotas`' `onReading`): the daily quota left. */
  noteQuota: (provider: string, quota: AccountQuota) => void;
}

/** How many of a campaign's messages are final. */
const finalOf = (c: StoredCampaign): number => FINAL_STATES.reduce((n, s) => n + c.counts[s], 0);

/**
 * The leader's launch decisions: each tick it decides every pending launch (see
 * {@link decideLaunch}), decides a held one again once its time is up or every
 * `launch.recheckMs`, and re-checks every launch in effect every `launch.recheckMs` at the
 * rates then in force: a receiver whose remaining recipients would now be sent after the
 * deadline is stopped (its recipients are not injected any more) and the record says why.
 * Resolves how many launches it wrote.
 */
export function createLaunchChore(options: LaunchChoreOptions): LaunchChore {
  const { config, redis, keys, logger } = options;
  const settings = config.launch;
  const store = createLaunchStore(redis, keys);
  const readings = new Map<string, AccountQuota>();
  const deps: InputDeps = { ...options, quotas: () => readings };
  // The records as last read, by version: a tick reads one HGET per launch unless it moved.
  const kept = new Map<string, StoredLaunch>();

  async function readLaunch(id: string): Promise<StoredLaunch | null> {
    const version = await store.version(id);
    const cached = kept.get(id);
    if (cached?.version === version) return cached;
    const stored = await store.read(id);
    if (stored) kept.set(id, stored);
    else kept.delete(id);
    return stored;
  }

  function subjectOf(c: StoredCampaign, record: LaunchRecord, domains: Record<string, number>): LaunchSubject {
    return {
      id: record.campaignId,
      tenantId: c.tenantId,
      priority: c.priority,
      rate: c.rate,
      burst: c.burst,
      expiresAt: c.expiresAt,
      stream: record.stream,
      domains,
    };
  }

  async function decide(stored: StoredLaunch, c: StoredCampaign, now: number): Promise<boolean> {
    const { record } = stored;
    const inputs = await readInputs(deps, subjectOf(c, record, record.forecast.domains), now);
    const p = decideLaunch({ ...inputs, now, total: record.forecast.total, settings });
    const needsApproval = p.kind === 'delay' || p.kind === 'split';
    const auto = needsApproval && settings.approval === 'auto';
    const decision: LaunchDecision = {
      ...p,
      decidedAt: now,
      decidedBy: options.holder,
      approval: !needsApproval ? 'not-needed' : auto ? 'approved' : 'required',
      ...(auto ? { approvedBy: 'sluice', approvedAt: now, approvalReason: 'launch.approval is auto' } : {}),
    };
    const written = await store.write(record.campaignId, stored.version, { ...record, decision, checkedAt: now });
    if (written)
      logger.info(
        { event: 'launch_decided', campaignId: record.campaignId, kind: p.kind, rule: p.rule },
        `launch of ${record.campaignId}: ${p.kind} (${p.rule}) — ${p.reason}`,
      );
    return written;
  }

  /** The share of the current wave (all of it without waves) not final yet, its start and deadline. */
  function current(d: LaunchDecision, record: LaunchRecord, final: number, now: number) {
    const waves = d.waves ?? [
      {
        atMs: d.kind === 'delay' ? (d.untilMs ?? d.startAt) : d.startAt,
        count: record.forecast.total,
        share: 1,
        upTo: record.forecast.total,
      },
    ];
    const started = waves.filter((w) => w.atMs <= now);
    const wave = started[started.length - 1] ?? waves[0]!;
    const left = Math.min(wave.count, Math.max(0, wave.upTo - final)) / record.forecast.total;
    const lifetime = d.deadline - d.startAt;
    return { left, startAt: Math.max(now, wave.atMs), deadline: d.waves ? wave.atMs + lifetime : d.deadline };
  }

  async function recheck(stored: StoredLaunch, c: StoredCampaign, now: number): Promise<boolean> {
    const { record } = stored;
    const d = record.decision!;
    const final = finalOf(c);
    const { left, startAt, deadline } = current(d, record, final, now);
    // What is left of each receiver, estimated from the campaign's progress as a whole.
    const domains: Record<string, number> = {};
    for (const [domain, n] of Object.entries(record.forecast.domains)) domains[domain] = Math.ceil(n * left);
    const inputs = await readInputs(deps, subjectOf(c, record, domains), now);
    const input: ProjectionInput = { ...inputs, now, total: record.forecast.total, settings };
    const stopped = { ...record.stopped };
    let changed = false;
    for (const r of projectReceivers(input, startAt, deadline)) {
      if (!r.late || stopped[r.receiver]) continue;
      const reason = `projected to finish at ${new Date(r.finishAt).toISOString()}, after the deadline ${new Date(deadline).toISOString()} (${r.rate.toPrecision(3)}/s, bound by ${r.binds.limit} ${r.binds.key}: ${r.binds.detail})`;
      stopped[r.receiver] = { reason, at: now, domains: r.domains };
      changed = true;
      logger.warn(
        { event: 'launch_receiver_stopped', campaignId: record.campaignId, receiver: r.receiver },
        `launch of ${record.campaignId}: ${r.receiver} stopped: ${reason}`,
      );
    }
    if (!changed && now - (record.checkedAt ?? 0) < settings.recheckMs * 4) return false;
    return store.write(record.campaignId, stored.version, { ...record, stopped, checkedAt: now });
  }

  async function visit(id: string, now: number): Promise<boolean> {
    const [stored, c] = await Promise.all([readLaunch(id), readStoredCampaign(redis, keys, id)]);
    if (!stored || !c || c.cancelled) {
      await redis.srem(keys.launches(), id);
      kept.delete(id);
      return false;
    }
    const { record } = stored;
    const d = record.decision;
    if (!d) return decide(stored, c, now);
    const due = now - (record.checkedAt ?? d.decidedAt) >= settings.recheckMs;
    if (d.kind === 'reject') {
      await redis.srem(keys.launches(), id);
      kept.delete(id);
      return false;
    }
    if (d.kind === 'held') return (d.untilMs !== undefined && now >= d.untilMs) || due ? decide(stored, c, now) : false;
    if (d.approval === 'required' || !due) return false;
    if (finalOf(c) >= record.forecast.total) {
      await redis.srem(keys.launches(), id);
      kept.delete(id);
      return false;
    }
    return recheck(stored, c, now);
  }

  return {
    name: 'launch decisions',
    noteQuota: (provider, q) =>
      void readings.set(provider, { max24HourSend: q.max24HourSend, sentLast24Hours: q.sentLast24Hours }),
    async run(now) {
      let written = 0;
      for (const id of await redis.smembers(keys.launches())) {
        // One launch that fails (its record unreadable, Redis away) is tried again next tick; the others go on.
        const ok = await visit(id, now).catch((err: unknown) => {
          logger.warn({ err, campaignId: id }, `launch of ${id}: not decided this tick`);
          return false;
        });
        if (ok) written++;
      }
      return written;
    },
  };
}
