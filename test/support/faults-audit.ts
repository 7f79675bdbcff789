// What a fault scenario checks once its fleet has drained: each message's record against
// what reached the sandbox. Shared by the crash storm and the Redis scenarios, so their
// figures (lost, duplicates, stuck) mean the same thing.
import { Queue } from 'bullmq';
import { FINAL_STATES, createKeys, type MessageState } from '@sluice/core';
import type { MessageRecord } from '@sluice/client';
import type { Fleet } from './fleet.js';

const FINAL: readonly string[] = FINAL_STATES;

/** The final state the scenario makes a message end in: sent, or rejected (a hard bounce). */
export type Expected = 'sent' | 'rejected';

/** One message's audit, for a failure message that says what went wrong. */
export interface AuditRow {
  id: string;
  to: string | undefined;
  campaignId: string | undefined;
  state: MessageState | 'missing';
  expected: Expected;
  /** Times the sandbox accepted it. */
  arrivals: number;
  /** Ambiguous attempts on its record. */
  ambiguous: number;
  attempts: number;
  lastOutcome: string | undefined;
}

/** What {@link auditMessages} found, by figure (each a list of rows, so a failure shows them). */
export interface Audit {
  /** Messages by final state (and `missing`, `active` for the rest). */
  byState: Record<string, number>;
  /** Not final: no record at all, or one still in an active state. */
  stuck: AuditRow[];
  /** Final, but not as the scenario made it: `sent` and never at the sandbox, or never sent when it should have been. */
  lost: AuditRow[];
  /**
   * Final in another state than the scenario made it (a hard bounce `sent`, mail to accept
   * `rejected`), except {@link Audit.assumedSentRefused}.
   */
  unexpected: AuditRow[];
  /**
   * Hard bounces recorded `sent` with no arrival: the worker died with the request out in
   * full and its answer (the refusal) unread, and the class counts an ambiguous send as sent
   * (`delivery.onAmbiguous: assume-sent`). What the design says, so neither lost nor unexpected.
   */
  assumedSentRefused: AuditRow[];
  /**
   * Recorded `sent` after an ambiguous attempt, never at the sandbox: the worker died after
   * the `submitted` mark and before the request's last byte (the ESP never had it whole),
   * and the class counts an ambiguous send as sent (`assume-sent`): the design's remaining
   * window, as `crash-steps` counts it, so not lost.
   */
  ambiguousNeverArrived: AuditRow[];
  /** At the sandbox more than once, ambiguity counted on its record. */
  duplicatesFlagged: AuditRow[];
  /** At the sandbox more than once with no ambiguity on its record: a silent second send. */
  duplicatesUnflagged: AuditRow[];
  /** Each message's row. */
  rows: Map<string, AuditRow>;
}

/** How many times the sandbox accepted each sluice id. */
export function arrivalsById(fleet: Fleet): Map<string, number> {
  const counts = new Map<string, number>();
  for (const a of fleet.sandbox.accepted()) {
    if (a.sluiceId !== undefined) counts.set(a.sluiceId, (counts.get(a.sluiceId) ?? 0) + 1);
  }
  return counts;
}

async function records(fleet: Fleet, ids: readonly string[]): Promise<(MessageRecord | null)[]> {
  const out: (MessageRecord | null)[] = [];
  // Chunks keep a few thousand lookups from queueing at once in one connection.
  for (let i = 0; i < ids.length; i += 500) {
    out.push(...(await Promise.all(ids.slice(i, i + 500).map((id) => fleet.client.messages.status(id)))));
  }
  return out;
}

/**
 * Polls until every message is final, or until none has become final for `stallMs` (the
 * fleet has stopped making progress: what is left is stuck), or `timeoutMs` has passed.
 * Resolves the ids still not final (empty when all are), so a scenario can report its
 * figures before it asserts. Progress, not a deadline, decides, so a loaded machine's
 * slower drain is not taken for stuck mail.
 */
export async function waitUntilFinal(
  fleet: Fleet,
  ids: readonly string[],
  timeoutMs: number,
  stallMs = 30_000,
): Promise<string[]> {
  const deadline = Date.now() + timeoutMs;
  let open = [...ids];
  let progressAt = Date.now();
  for (;;) {
    const found = await records(fleet, open);
    const left = open.filter((_, i) => !FINAL.includes(found[i]?.state ?? ''));
    if (left.length < open.length) progressAt = Date.now();
    open = left;
    if (open.length === 0 || Date.now() > deadline || Date.now() - progressAt > stallMs) return open;
    await new Promise((r) => setTimeout(r, 500));
  }
}

/** Audits every message against the sandbox: see {@link Audit}. */
export async function auditMessages(
  fleet: Fleet,
  ids: readonly string[],
  expected: (id: string) => Expected,
): Promise<Audit> {
  const found = await records(fleet, ids);
  const arrivals = arrivalsById(fleet);
  const audit: Audit = {
    byState: {},
    stuck: [],
    lost: [],
    unexpected: [],
    assumedSentRefused: [],
    ambiguousNeverArrived: [],
    duplicatesFlagged: [],
    duplicatesUnflagged: [],
    rows: new Map(),
  };
  ids.forEach((id, i) => {
    const r = found[i];
    const row: AuditRow = {
      id,
      to: r?.to,
      campaignId: r?.campaignId,
      state: r?.state ?? 'missing',
      expected: expected(id),
      arrivals: arrivals.get(id) ?? 0,
      ambiguous: r?.ambiguous ?? 0,
      attempts: r?.attempts ?? 0,
      lastOutcome: r?.lastOutcome,
    };
    audit.rows.set(id, row);
    const final = FINAL.includes(row.state);
    const key = final ? row.state : row.state === 'missing' ? 'missing' : 'active';
    audit.byState[key] = (audit.byState[key] ?? 0) + 1;
    // A compacted record (delivery.retention: compact) keeps no lastOutcome, only its ambiguity.
    const ambiguousLast = row.lastOutcome === 'ambiguous' || (row.lastOutcome === undefined && row.ambiguous > 0);
    const assumedSent = row.state === 'sent' && row.arrivals === 0 && ambiguousLast;
    if (!final) audit.stuck.push(row);
    else if (assumedSent && row.expected === 'rejected') audit.assumedSentRefused.push(row);
    else if (assumedSent) audit.ambiguousNeverArrived.push(row);
    else {
      if (row.arrivals === 0 && (row.state === 'sent' || row.expected === 'sent')) audit.lost.push(row);
      if (row.state !== row.expected) audit.unexpected.push(row);
    }
    if (row.arrivals > 1) (row.ambiguous > 0 ? audit.duplicatesFlagged : audit.duplicatesUnflagged).push(row);
  });
  return audit;
}

/** The audit's counts, as `reportFaults` takes them. */
export function auditFigures(audit: Audit): {
  lost: number;
  duplicatesFlagged: number;
  duplicatesUnflagged: number;
  stuck: number;
} {
  return {
    lost: audit.lost.length,
    duplicatesFlagged: audit.duplicatesFlagged.length,
    duplicatesUnflagged: audit.duplicatesUnflagged.length,
    stuck: audit.stuck.length,
  };
}

/** Rows counted by a description (state, last outcome, campaign, domain), for a failure's log. */
export function summarize(rows: readonly AuditRow[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const r of rows) {
    const outcome = r.lastOutcome?.replace(/\d+/g, 'N') ?? '-';
    const key = `${r.state}/${outcome}/${r.campaignId ?? 'transactional'}/${r.to?.split('@')[1] ?? '?'}`;
    out[key] = (out[key] ?? 0) + 1;
  }
  return out;
}

/** Where one BullMQ job of a stuck message is: its queue, state, timings and lock. */
export interface StuckJob {
  queue: string;
  jobId: string;
  /** `Queue.getJobState`: waiting, delayed, active, prioritized, completed, failed, unknown… */
  state: string;
  /** When a delayed job is due (epoch ms): its score in the queue's delayed set. */
  dueAt: number | undefined;
  attemptsMade: string | undefined;
  failedReason: string | undefined;
  processedOn: string | undefined;
  /** The lock's remaining ms (`PTTL`): -2 none (a worker holds it no longer). */
  lockTtlMs: number;
}

/** What the fleet's Redis holds of a stuck message: its record, its attempt log, and every job of it. */
export interface StuckExplained {
  id: string;
  record: Record<string, string>;
  attemptLog: string[];
  jobs: StuckJob[];
  /**
   * Whether a job of it will run (waiting, prioritized, delayed or active): false, nothing
   * will ever move it again (a defect); true, it was only slow (the drain's deadline).
   */
  willRun: boolean;
  /** The queues its jobs are in, paused or held (rate-limited) as each is now. */
  queues: Record<string, { paused: boolean; heldMs: number }>;
}

/** A delayed job's due time: BullMQ scores it `due * 0x1000 + a counter`. */
async function dueAt(redis: Fleet['redis'], delayedKey: string, jobId: string): Promise<number | undefined> {
  const score = await redis.zscore(delayedKey, jobId);
  return score === null ? undefined : Math.floor(Number(score) / 0x1000);
}

const LIVE = ['waiting', 'prioritized', 'delayed', 'active', 'waiting-children'];
const JOB_QUEUE = /^(campaign-.+|intake-[a-z]+|dispatch-[a-z]+)$/;

/**
 * For each stuck message, where its BullMQ jobs are (every queue under the fleet's prefix:
 * campaign, intake and dispatch; a readmitted message's job ids carry its hop) and what its
 * record and attempt log say: a stuck message must always explain itself.
 */
export async function explainStuck(fleet: Fleet, rows: readonly AuditRow[]): Promise<StuckExplained[]> {
  const { redis, prefix } = fleet;
  const keys = createKeys(prefix);
  const handles = new Map<string, Queue>();
  const queue = (name: string): Queue => {
    let q = handles.get(name);
    if (!q) handles.set(name, (q = new Queue(name, { connection: redis, prefix, skipMetasUpdate: true })));
    return q;
  };
  const out: StuckExplained[] = [];
  try {
    // One pass over the fleet's keys: each job's hash is `<prefix>:<queue>:<id>[-<hop>]`.
    const stuck = new Set(rows.map((r) => r.id));
    const jobKeys = new Map<string, { key: string; name: string; jobId: string }[]>();
    let cursor = '0';
    do {
      const [next, batch] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 10_000);
      cursor = next;
      for (const key of batch) {
        const [name, jobId, ...rest] = key.slice(prefix.length + 1).split(':');
        const id = jobId?.replace(/-\d+$/, '');
        if (rest.length > 0 || !JOB_QUEUE.test(name ?? '') || id === undefined || !stuck.has(id)) continue;
        jobKeys.set(id, [...(jobKeys.get(id) ?? []), { key, name: name!, jobId: jobId! }]);
      }
    } while (cursor !== '0');
    for (const row of rows) {
      const jobs: StuckJob[] = [];
      const queues: StuckExplained['queues'] = {};
      for (const { key, name, jobId } of jobKeys.get(row.id) ?? []) {
        const q = queue(name);
        const [attemptsMade, failedReason, processedOn] = await redis.hmget(
          key,
          'attemptsMade',
          'failedReason',
          'processedOn',
        );
        jobs.push({
          queue: name,
          jobId: jobId,
          state: await q.getJobState(jobId),
          dueAt: await dueAt(redis, `${prefix}:${name}:delayed`, jobId),
          attemptsMade: attemptsMade ?? undefined,
          failedReason: failedReason ?? undefined,
          processedOn: processedOn ?? undefined,
          lockTtlMs: await redis.pttl(`${key}:lock`),
        });
        queues[name] ??= { paused: await q.isPaused(), heldMs: Math.max(0, await q.getRateLimitTtl()) };
      }
      out.push({
        id: row.id,
        record: await redis.hgetall(keys.message(row.id)),
        attemptLog: await redis.lrange(keys.attempts(row.id), 0, -1),
        jobs,
        willRun: jobs.some((j) => LIVE.includes(j.state)),
        queues,
      });
    }
  } finally {
    // The handles share the fleet's connection: closing them leaves it open.
    await Promise.all([...handles.values()].map((q) => q.close()));
  }
  return out;
}
