// What a fault scenario checks once its fleet has drained: each message's record against
// what reached the sandbox. Shared by the crash storm and the Redis scenarios, so their
// figures (lost, duplicates, stuck) mean the same thing.
import { FINAL_STATES, type MessageState } from '@sluice/core';
import type { MessageRecord } from '@sluice/client';
import type { Fleet } from './fleet.js';

const FINAL: readonly string[] = FINAL_STATES;

/** The final state the scenario makes a message end in: sent, or rejected (a hard bounce). */
export type Expected = 'sent' | 'rejected';

/** One message's audit, for a failure message that says what went wrong. */
export interface AuditRow {
  id: string;
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
 * Polls until every message is final or `timeoutMs` has passed; resolves the ids still not
 * final (empty when all are), so a scenario can report its figures before it asserts.
 */
export async function waitUntilFinal(fleet: Fleet, ids: readonly string[], timeoutMs: number): Promise<string[]> {
  const deadline = Date.now() + timeoutMs;
  let open = [...ids];
  for (;;) {
    const found = await records(fleet, open);
    open = open.filter((_, i) => !FINAL.includes(found[i]?.state ?? ''));
    if (open.length === 0 || Date.now() > deadline) return open;
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
    duplicatesFlagged: [],
    duplicatesUnflagged: [],
    rows: new Map(),
  };
  ids.forEach((id, i) => {
    const r = found[i];
    const row: AuditRow = {
      id,
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
    if (!final) audit.stuck.push(row);
    else if (row.state === 'sent' ? row.arrivals === 0 : row.expected === 'sent' && row.arrivals === 0) {
      audit.lost.push(row);
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
