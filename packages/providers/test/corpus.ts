import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { PERMANENT_FAMILIES, TEMPORARY_FAMILIES } from '@sluice/core';
import { classifyReply, FAMILIES, type Classification, type Family, type Reply } from '../src/classify.js';

/**
 * The reply corpus (`corpus/replies.jsonl`): real replies collected from public sources, one
 * JSON object a line, each labelled with the family the classifier must give it.
 */
export interface CorpusEntry {
  /** The reply as the receiver or ESP sent it: basic code, enhanced code, text. */
  reply: string;
  /** The receiving organisation (or MTA software) that sent it, as a short slug. */
  receiver: string;
  /** The host that answered, when the source shows it. */
  host?: string;
  /** `smtp`, or the ESP whose API or event feed said it (`ses`, `sendgrid`, `mailgun`…). */
  via: string;
  /** `http` for an ESP API's answer (with its `status`); else an SMTP reply or an ESP event's text. */
  channel?: 'http';
  family: Family;
  /** Where it was published: a URL, or `github:owner/repo:path`. */
  source: string;
  /** Why the label, when a decision rule was needed. */
  note?: string;
  /** HTTP status (ESP APIs), or the SMTP status when the text carries none. */
  status?: number;
  /** The SDK's error name (ESP APIs), e.g. `MessageRejected`. */
  errorName?: string;
}

/** Families that are never retried: reading a deferral as one of these loses mail. */
const PERMANENT: ReadonlySet<Family> = new Set<Family>(PERMANENT_FAMILIES);
/** The deferrals: every temporary family but our own account and the undecided. */
const DEFERRALS: ReadonlySet<Family> = new Set<Family>(
  TEMPORARY_FAMILIES.filter((f) => f !== 'sender_config' && f !== 'unknown'),
);
const NOT_THE_ADDRESS: ReadonlySet<Family> = new Set<Family>(['policy_block', 'reputation_deferral', 'throttled']);

/**
 * A severe misread (issue 15): a deferral read as a permanent family (mail dropped), or a
 * verdict on the sender or its pace read as a bad address (a good address suppressed).
 */
export function severe(expected: Family, got: Family): boolean {
  return (DEFERRALS.has(expected) && PERMANENT.has(got)) || (NOT_THE_ADDRESS.has(expected) && got === 'bad_recipient');
}

/** The corpus's text key: what makes two entries the same reply. */
export const textKey = (reply: string): string => reply.replace(/\s+/g, ' ').trim().toLowerCase();

/**
 * Held out: a fifth of the corpus, chosen by a hash of the text (so an entry stays on its side
 * as the corpus grows). Rules are written against the rest; the report gives both figures.
 */
export const heldOut = (entry: CorpusEntry): boolean =>
  createHash('sha1').update(textKey(entry.reply)).digest()[0]! % 5 === 0;

/** The basic code, also behind an application's "SMTP Error" (`SMTP Error 450 5.2.3 …`). */
const SMTP_STATUS = /^\s*(?:SMTP Error:?\s*)?(\d{3})(?:[\s-]|$)/i;
const ENHANCED_CLASS = /\b([45])\.\d{1,3}\.\d{1,3}\b/;

/** The reply an adapter would have seen for a corpus entry. */
export function replyOf(entry: CorpusEntry): Reply {
  if (entry.channel === 'http') {
    const reply: Reply = { channel: 'http', status: entry.status ?? 400, text: entry.reply, receiver: entry.via };
    if (entry.errorName !== undefined) reply.errorName = entry.errorName;
    return reply;
  }
  const basic = SMTP_STATUS.exec(entry.reply)?.[1];
  const cls = ENHANCED_CLASS.exec(entry.reply)?.[1];
  const status = basic !== undefined ? Number(basic) : (entry.status ?? (cls === '4' ? 450 : 550));
  const reply: Reply = { channel: 'smtp', status, text: entry.reply, receiver: entry.receiver };
  if (entry.host !== undefined) reply.host = entry.host;
  return reply;
}

/** Reads the corpus and checks every entry's shape; throws naming the line of a bad one. */
export function loadCorpus(file = new URL('./corpus/replies.jsonl', import.meta.url)): CorpusEntry[] {
  const families = new Set<string>(FAMILIES);
  const seen = new Map<string, number>();
  return readFileSync(file, 'utf8')
    .split('\n')
    .map((line, i) => ({ line, n: i + 1 }))
    .filter(({ line }) => line.trim() !== '')
    .map(({ line, n }) => {
      const e = JSON.parse(line) as CorpusEntry;
      const bad = (what: string): never => {
        throw new Error(`corpus line ${n}: ${what}`);
      };
      if (typeof e.reply !== 'string' || e.reply.trim() === '') bad('reply must be a non-empty string');
      if (!families.has(e.family)) bad(`family "${e.family}" is not one of ${[...families].join(', ')}`);
      if (typeof e.receiver !== 'string' || !/^[a-z0-9][a-z0-9.&-]*$/.test(e.receiver)) bad('receiver must be a slug');
      if (typeof e.source !== 'string' || e.source.length < 8) bad('source must say where the reply was published');
      if (typeof e.via !== 'string' || !/^[a-z0-9][a-z0-9-]*$/.test(e.via)) bad('via must be smtp or an ESP slug');
      if (e.channel === 'http' && (e.via === 'smtp' || e.status === undefined))
        bad('an http reply names its ESP (via) and status');
      const key = textKey(e.reply);
      const first = seen.get(key);
      if (first !== undefined) bad(`the same reply as line ${first}`);
      seen.set(key, n);
      return e;
    });
}

/** One entry classified. */
export interface Scored {
  entry: CorpusEntry;
  got: Classification;
  right: boolean;
  severe: boolean;
  heldOut: boolean;
}

/** Classifies every entry of the corpus. */
export function score(entries: readonly CorpusEntry[]): Scored[] {
  return entries.map((entry) => {
    const got = classifyReply(replyOf(entry));
    return {
      entry,
      got,
      right: got.family === entry.family,
      severe: severe(entry.family, got.family),
      heldOut: heldOut(entry),
    };
  });
}
