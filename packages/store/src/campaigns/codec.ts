import { FINAL_STATES, PRIORITY_CLASSES, type FinalState, type PriorityClass } from '@sluice/core';
import type { LaunchRecord } from './launch-types.js';
import { hashRead as read, type HashFields } from '../redis/hash-read.js';

// The campaign hash (`keys.campaign(id)`, under the campaign's hash tag with its queue): a
// campaign's settings, its pause and cancel flags, the injection window the schedulers write
// and, once archived, its archive. Its counters are in its parts in the message homes
// (`keys.campaignHome(id, home)`: `n:<state>` and a copy of `paused`), written with the records
// there and summed by `readCampaignCounts` (read.ts); archived, they expire with the hash. This module is the one that knows its field names: every read
// and write of the hash in TypeScript encodes or decodes through it (the key builder is used
// only in `campaigns/` and `records/`, which the lint rule in eslint.config.js enforces).
// Stored data outlives deployments: fields are only ever added, and decoding stays tolerant.
//
// Lua scripts know some of the names too (Lua cannot import them); a change here changes them:
// - accept-4.lua counts `n:accepted` and finalize-n.lua `n:<final state>` in a home's part;
// - transition-3.lua reads a home's part's `paused` (an attempt is held while it is `1`);
// - resume-campaign-1.lua reads `createdAt` and `cancelled`, and clears `paused`;
// - archive-campaign-5.lua reads `createdAt`, `archivedAt`; writes `archivedAt`, `archivedBy`,
//   `archive:content`, `archive:launch`, `archive:cursor`; clears `win:ready`, `win:max`,
//   `win:rate`, `win:blocks`, `finishedAt`, `finishedAccepted`;
// - delete-campaign-5.lua reads `createdAt`, `archivedAt`.

/** The field names of the campaign hash. */
export const CAMPAIGN_FIELDS = {
  name: 'name',
  tenantId: 'tenantId',
  priority: 'priority',
  rate: 'rate',
  burst: 'burst',
  /** Claimed with HSETNX: it says the campaign exists. */
  createdAt: 'createdAt',
  /** Read by the launch decision; no writer sets it yet. */
  expiresAt: 'expiresAt',
  /** `1` while paused: the flag a worker's attempt checks (transition-3.lua). */
  paused: 'paused',
  cancelled: 'cancelled',
  cancelledAt: 'cancelledAt',
  cancelledBy: 'cancelledBy',
  cancelReason: 'cancelReason',
  archivedAt: 'archivedAt',
  archivedBy: 'archivedBy',
  archiveContent: 'archive:content',
  archiveLaunch: 'archive:launch',
  archiveCursor: 'archive:cursor',
  /** When the archive chore first found it finished, and at which `n:accepted`. */
  finishedAt: 'finishedAt',
  finishedAccepted: 'finishedAccepted',
  windowReady: 'win:ready',
  windowMax: 'win:max',
  windowRate: 'win:rate',
  /** Set once a chunk of it was written in blocks (campaign jobs of many recipients). */
  windowBlocks: 'win:blocks',
} as const;

const F = CAMPAIGN_FIELDS;

/** The counter of accepted messages or of one final state: `n:<state>`. */
export const countField = (state: 'accepted' | FinalState): string => `n:${state}`;

/** Messages accepted and in each final state. */
export type CampaignCounts = Record<'accepted' | FinalState, number>;

/** A campaign's settings. */
export interface Campaign {
  id: string;
  name: string;
  tenantId: string;
  priority: PriorityClass;
  rate: number | undefined;
  burst: number | undefined;
  createdAt: number;
  /** When it was archived (epoch ms); undefined while active. */
  archivedAt?: number | undefined;
}

/** What an archived campaign keeps of its content: enough to tell which mail it was. */
export interface ContentSummary {
  from: string;
  subject?: string;
  /** The ESP template, when the content was one. */
  template?: string;
  stream?: string;
  /** Size of the content as it was stored (JSON bytes). */
  bytes: number;
}

/** An archived campaign's archive (`campaigns.status(id).archive`). */
export interface CampaignArchive {
  /** When it was archived (epoch ms); its record expires `campaigns.archivedRetentionMs` later. */
  at: number;
  /** Who archived it: `sluice` (the leader's archive chore) or the actor given. */
  by: string;
  /** Its content in short; null if it took whole messages (`send`). */
  content: ContentSummary | null;
}

/** What a writer or reader checks before it acts on a campaign (one HMGET: {@link CAMPAIGN_FLAGS}). */
export interface CampaignFlags {
  /** The campaign exists (it was created, and is not deleted). */
  exists: boolean;
  /** Its name (its id when none was given). */
  name: string;
  tenantId: string;
  /** The class of its mail. */
  priority: PriorityClass;
  /** Its pause flag is set (paused, or cancelled). */
  paused: boolean;
  cancelled: boolean;
  archived: boolean;
}

/** The whole hash of a campaign that exists, decoded (`readStoredCampaign`). */
export interface StoredCampaign extends Campaign {
  paused: boolean;
  cancelled: boolean;
  counts: CampaignCounts;
  /** When its mail must be sent by (epoch ms), if the hash says so. */
  expiresAt: number | undefined;
  /** When the archive chore first found it finished, and at which `n:accepted`. */
  finished: { at: number; accepted: number } | undefined;
  /** Its archive; null while active. */
  archive: CampaignArchive | null;
  /** The launch record it kept when archived; null if never launched (or active). */
  archivedLaunch: LaunchRecord | null;
  /** Its injection cursor as archived (`<position>|<value>`); null while active. */
  archivedCursor: string | null;
}

/** The hash as HGETALL gives it (or HMGET, turned into one by a `HashRead`). */
export type CampaignHash = HashFields;

const COUNT_FIELDS = (['accepted', ...FINAL_STATES] as const).map(countField);

/** Counters of several homes added up. */
export function addCounts(parts: readonly CampaignCounts[]): CampaignCounts {
  const sum = decodeCounts({});
  for (const part of parts) for (const k of Object.keys(sum) as (keyof CampaignCounts)[]) sum[k] += part[k];
  return sum;
}
const num = (v: string | undefined): number | undefined => (v ? Number(v) : undefined);
const priorityOf = (v: string | undefined): PriorityClass =>
  (PRIORITY_CLASSES as readonly string[]).includes(v ?? '') ? (v as PriorityClass) : 'low';

/** Reads a campaign's settings; null if the hash says it does not exist (no `createdAt`). */
export function decodeCampaign(id: string, h: CampaignHash): Campaign | null {
  if (!h[F.createdAt]) return null;
  const archivedAt = num(h[F.archivedAt]);
  return {
    id,
    name: h[F.name] ?? id,
    tenantId: h[F.tenantId] ?? 'default',
    priority: priorityOf(h[F.priority]),
    rate: num(h[F.rate]),
    burst: num(h[F.burst]),
    createdAt: Number(h[F.createdAt]),
    ...(archivedAt !== undefined ? { archivedAt } : {}),
  };
}

/** The settings `campaigns.create` writes (`createdAt` is claimed with HSETNX first). */
export function encodeCampaign(
  c: Pick<Campaign, 'name' | 'tenantId' | 'priority' | 'createdAt'> & { rate?: number; burst?: number },
): Record<string, string> {
  const fields: Record<string, string> = {
    [F.name]: c.name,
    [F.tenantId]: c.tenantId,
    [F.priority]: c.priority,
    [F.createdAt]: String(c.createdAt),
  };
  if (c.rate !== undefined) fields[F.rate] = String(c.rate);
  if (c.burst !== undefined) fields[F.burst] = String(c.burst);
  return fields;
}

/** Messages accepted and in each final state (`n:<state>`; 0 where absent). */
export function decodeCounts(h: CampaignHash): CampaignCounts {
  const n = (s: 'accepted' | FinalState): number => Number(h[countField(s)] ?? 0);
  return {
    accepted: n('accepted'),
    sent: n('sent'),
    rejected: n('rejected'),
    suppressed: n('suppressed'),
    expired: n('expired'),
    cancelled: n('cancelled'),
    unconfirmed: n('unconfirmed'),
  };
}

/** How many of the counted messages are final. */
export function finalCount(c: CampaignCounts): number {
  return FINAL_STATES.reduce((sum, s) => sum + c[s], 0);
}

function decodeFlags(h: CampaignHash): CampaignFlags {
  return {
    exists: Boolean(h[F.createdAt]),
    name: h[F.name] ?? '',
    tenantId: h[F.tenantId] ?? 'default',
    priority: priorityOf(h[F.priority]),
    paused: h[F.paused] === '1',
    cancelled: h[F.cancelled] === '1',
    archived: Boolean(h[F.archivedAt]),
  };
}

/** Whether the campaign exists, its tenant and class, and its flags: what every writer checks. */
export const CAMPAIGN_FLAGS = read(
  [F.createdAt, F.name, F.tenantId, F.priority, F.paused, F.cancelled, F.archivedAt],
  decodeFlags,
);

/** The pause flag alone (a worker's read before each send). */
export const CAMPAIGN_PAUSED = read([F.paused], (h) => h[F.paused] === '1');

/** The campaign's own limit (its rate and burst), as admission and the workers apply it. */
export const CAMPAIGN_LIMIT = read([F.rate, F.burst], (h) => ({ rate: num(h[F.rate]), burst: num(h[F.burst]) }));

/** The counters alone (of a home's part, or of an archived campaign's hash). */
export const CAMPAIGN_COUNTS = read(COUNT_FIELDS, decodeCounts);

/** The injection window the schedulers wrote (0 where none was written yet). */
export const CAMPAIGN_WINDOW = read([F.windowReady, F.windowMax, F.windowRate, F.windowBlocks], (h) => ({
  ready: Number(h[F.windowReady] ?? 0),
  max: Number(h[F.windowMax] ?? 0),
  rate: Number(h[F.windowRate] ?? 0),
  blocks: h[F.windowBlocks] === '1',
}));

/** The campaign hash field that says its jobs are written in blocks ({@link CAMPAIGN_WINDOW}'s `blocks`). */
export const CAMPAIGN_BLOCKS_FIELD = F.windowBlocks;

/**
 * The pause flag as written (`campaigns.pause`, the governor): set to pause, deleted to resume;
 * in the hash and, copied, in each home's part (`writePauseCopies`).
 */
export function encodePaused(): Record<string, string> {
  return { [F.paused]: '1' };
}

/** A cancel, written at once with the pause flag (the flag a worker's attempt checks). */
export function encodeCancel(c: { at: number; by: string; reason: string }): Record<string, string> {
  return {
    [F.paused]: '1',
    [F.cancelled]: '1',
    [F.cancelledAt]: String(c.at),
    [F.cancelledBy]: c.by,
    [F.cancelReason]: c.reason,
  };
}

/** The window a scheduler writes: `win:rate` with one decimal. */
export function encodeWindow(w: { ready: number; max: number; rate: number }): Record<string, string> {
  return { [F.windowReady]: String(w.ready), [F.windowMax]: String(w.max), [F.windowRate]: w.rate.toFixed(1) };
}

/** The archive chore's stamp on a campaign it found finished, and the fields that clear it. */
export function encodeFinished(at: number, accepted: number): Record<string, string> {
  return { [F.finishedAt]: String(at), [F.finishedAccepted]: String(accepted) };
}
export const FINISHED_FIELDS = [F.finishedAt, F.finishedAccepted] as const;

function decodeFinished(h: CampaignHash): StoredCampaign['finished'] {
  if (h[F.finishedAt] === undefined) return undefined;
  return { at: Number(h[F.finishedAt]), accepted: Number(h[F.finishedAccepted] ?? -1) };
}

/** An archived campaign's archive; null if it is not archived. */
export function decodeArchive(h: CampaignHash): CampaignArchive | null {
  if (!h[F.archivedAt]) return null;
  const content = h[F.archiveContent];
  return {
    at: Number(h[F.archivedAt]),
    by: h[F.archivedBy] ?? 'unknown',
    content: content ? (JSON.parse(content) as ContentSummary) : null,
  };
}

/**
 * Every field of a campaign that exists, decoded; null if it does not. `counts` are its
 * counters, the sum of its parts in the homes (`readCampaignCounts`).
 */
export function decodeStoredCampaign(id: string, h: CampaignHash, counts: CampaignCounts): StoredCampaign | null {
  const c = decodeCampaign(id, h);
  if (!c) return null;
  const launch = h[F.archiveLaunch];
  return {
    ...c,
    paused: h[F.paused] === '1',
    cancelled: h[F.cancelled] === '1',
    counts,
    expiresAt: num(h[F.expiresAt]),
    finished: decodeFinished(h),
    archive: decodeArchive(h),
    archivedLaunch: launch ? (JSON.parse(launch) as LaunchRecord) : null,
    archivedCursor: h[F.archiveCursor] || null,
  };
}

/** The settings alone of a decoded hash (what `campaigns.get` answers). */
export function settingsOf(c: StoredCampaign): Campaign {
  const { id, name, tenantId, priority, rate, burst, createdAt, archivedAt } = c;
  return { id, name, tenantId, priority, rate, burst, createdAt, ...(archivedAt !== undefined ? { archivedAt } : {}) };
}
