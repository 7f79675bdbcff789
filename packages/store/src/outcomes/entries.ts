import type { FinalState } from '@sluice/core';

// A stream entry of a home's outcome stream, and the ids that name it: what a read decodes,
// merges and compares (docs/design/outcomes.md).

/** One event of the outcome stream: a message's final state, or its first deferral. */
export interface OutcomeEvent {
  /** The event's id (`<home>-<ms>-<seq>`: its home's stream and its entry there): what `ack` takes. */
  id: string;
  messageId: string;
  /** The final state, or `deferred` for a message's first temporary failure (it is retried). */
  state: FinalState | 'deferred';
  campaignId: string | undefined;
  tenantId: string;
  /** The backend's own key of the recipient, when the message carries one. */
  key: string | undefined;
  providerMessageId: string | undefined;
  /** The outcome family of the last reply (`accepted`, `bad_recipient`, `greylisted`, …). */
  family: string | undefined;
  /** When it happened, epoch ms. */
  at: number;
}

export type Entry = [id: string, fields: string[] | null];

export function decode(home: number, entries: readonly Entry[]): OutcomeEvent[] {
  const out: OutcomeEvent[] = [];
  for (const [entry, fields] of entries) {
    const id = `${home}-${entry}`;
    if (!fields) continue;
    const f: Record<string, string> = {};
    for (let i = 0; i + 1 < fields.length; i += 2) f[fields[i]!] = fields[i + 1]!;
    out.push({
      id,
      messageId: f.id ?? '',
      state: (f.state ?? 'deferred') as OutcomeEvent['state'],
      campaignId: f.campaign || undefined,
      tenantId: f.tenant || 'default',
      key: f.key || undefined,
      providerMessageId: f.providerMessageId || undefined,
      family: f.family || undefined,
      at: Number(f.at ?? entry.split('-')[0]),
    });
  }
  return out;
}

/** An event's id split into its home and its stream entry id. */
export function splitId(id: string): { home: number; entry: string } {
  const dash = id.indexOf('-');
  return { home: Number(id.slice(0, dash)), entry: id.slice(dash + 1) };
}

/** Events of several homes, oldest first (by the entry's time; a home's own order kept). */
export function merged(parts: readonly OutcomeEvent[][], count: number): OutcomeEvent[] {
  return parts
    .flat()
    .sort((a, b) => compareIds(splitId(a.id).entry, splitId(b.id).entry))
    .slice(0, count);
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Stream ids compared as (ms, seq). */
export function compareIds(a: string, b: string): number {
  const [am = 0, as = 0] = a.split('-').map(Number);
  const [bm = 0, bs = 0] = b.split('-').map(Number);
  return am - bm || as - bs;
}

/** The smallest id above `id`. */
export function nextId(id: string): string {
  const [ms, seq] = id.split('-');
  return `${ms}-${Number(seq ?? 0) + 1}`;
}

export function pairs(row: unknown): Record<string, unknown> {
  const list = row as unknown[];
  const out: Record<string, unknown> = {};
  for (let i = 0; i + 1 < list.length; i += 2) out[String(list[i])] = list[i + 1];
  return out;
}
