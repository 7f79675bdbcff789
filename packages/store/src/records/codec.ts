import type { Keys, MessageOrigin, MessageState, PriorityClass, QueuedMessage } from '@sluice/core';
import { hashRead, type HashFields } from '../redis/hash-read.js';
import type { HeldNote, MessageRecord } from './message-record.js';

// The message record (`keys.message(id)`, `<prefix>:{h…}:msg:<id>` in its home): one small
// hash per message, kept a listpack (values under 64 bytes where they can be). This module is
// the one that knows its field names: every read and write of the record in TypeScript
// encodes or decodes through it (the key builder is used only in `records/` and `campaigns/`,
// which the lint rule in eslint.config.js enforces). Stored data outlives deployments: fields
// are only ever added.
//
// Lua scripts know the names too (Lua cannot import them); a change here changes them:
// Every record script's keys are in the message's home (`homeOf` in core).
// - accept-4.lua reads `state` and writes the fields of {@link encodeNewRecord};
// - transition-3.lua reads `state`, `heldBy`, `attempts`, `campaignId`, `tenantId`, `key`,
//   `lastOutcome`; writes `state`, `updatedAt`, `attempts`, `ambiguous` and the fields it is
//   given ({@link encodeRetry}, {@link encodeRequeue}); clears the held note's four;
// - finalize-n.lua reads `state`, `ambiguous`, `heldBy`, `campaignId`, `tenantId`, `key`,
//   `providerMessageId`, `lastOutcome`; writes `state`, `updatedAt`, `finalAt` and the fields
//   of {@link encodeDetails}; clears the held note's four;
// - retain-4.lua reads `state`, `priority`, `provider`, `providerMessageId`, `finalAt`,
//   `ambiguous`, `campaignId`; drops `to`, `lastReply`, `createdAt`, `updatedAt`, `attempts`,
//   `retryAt` and the held note's four;
// - record-event-1.lua reads and writes `event` and `eventAt`.

/** The field names of the message record. */
export const RECORD_FIELDS = {
  state: 'state',
  priority: 'priority',
  to: 'to',
  tenantId: 'tenantId',
  /** '' for a message of no campaign. */
  campaignId: 'campaignId',
  /** The backend's own key of an injected recipient. */
  key: 'key',
  attempts: 'attempts',
  ambiguous: 'ambiguous',
  createdAt: 'createdAt',
  updatedAt: 'updatedAt',
  finalAt: 'finalAt',
  lastReply: 'lastReply',
  lastOutcome: 'lastOutcome',
  provider: 'provider',
  providerMessageId: 'providerMessageId',
  receiver: 'receiver',
  /** The last ESP event (record-event-1.lua) and when it happened. */
  event: 'event',
  eventAt: 'eventAt',
  /** The scheduler's note of why it waits ({@link encodeHeld}). */
  heldBy: 'heldBy',
  heldKey: 'heldKey',
  heldUntil: 'heldUntil',
  heldReason: 'heldReason',
  /** How often it was given back to admission (its dispatch job is `<id>-<hop>`). */
  hop: 'hop',
  /** When its retry is due (epoch ms). */
  retryAt: 'retryAt',
  /** The API key it came with over HTTP, and the address it came from (`QueuedMessage.origin`). */
  apiKey: 'apiKey',
  source: 'source',
} as const;

const F = RECORD_FIELDS;

/** A field of the record. */
export type RecordField = (typeof RECORD_FIELDS)[keyof typeof RECORD_FIELDS];

/** The record's fields as stored, for a person to read (`explain`); every value a string. */
export type RecordFields = Partial<Record<RecordField, string>>;

/** Values are cut to this, so the record stays a listpack. */
const HELD_MAX = 60;
/** Replies are cut to this. */
const REPLY_MAX = 2000;

/** The fields of a new message's record, as accept-4.lua writes them (field, value, …). */
export function encodeNewRecord(message: QueuedMessage): string[] {
  const fields = [
    F.state,
    'queued',
    F.priority,
    message.priority,
    F.to,
    message.to,
    F.tenantId,
    message.tenantId,
    F.campaignId,
    message.campaignId ?? '',
    F.attempts,
    '0',
    F.createdAt,
    String(message.acceptedAt),
    F.updatedAt,
    String(message.acceptedAt),
  ];
  if (message.injected?.key !== undefined) fields.push(F.key, message.injected.key);
  if (message.origin !== undefined) fields.push(F.apiKey, message.origin.keyId, F.source, message.origin.source);
  return fields;
}

/** What a final state or a retry writes of its attempt (field, value, …). */
export function encodeDetails(d: {
  reply?: string | undefined;
  outcome?: string | undefined;
  provider?: string | undefined;
  providerMessageId?: string | undefined;
  receiver?: string | undefined;
}): string[] {
  const out: string[] = [];
  if (d.reply !== undefined) out.push(F.lastReply, d.reply.slice(0, REPLY_MAX));
  if (d.outcome !== undefined) out.push(F.lastOutcome, d.outcome);
  if (d.provider !== undefined) out.push(F.provider, d.provider);
  if (d.providerMessageId !== undefined) out.push(F.providerMessageId, d.providerMessageId);
  // Kept on the record so the ESP's later events count under the receiver the attempts did.
  if (d.receiver !== undefined) out.push(F.receiver, d.receiver);
  return out;
}

/** The scheduler's note of why a message waits, each value cut to 60 characters (field, value, …). */
export function encodeHeld(held: HeldNote): string[] {
  const values = [held.by, held.key, String(Math.round(held.untilMs)), held.reason].map((v) => v.slice(0, HELD_MAX));
  return [F.heldBy, values[0]!, F.heldKey, values[1]!, F.heldUntil, values[2]!, F.heldReason, values[3]!];
}

/** What a retry writes besides its state: its reply and family, when it is due, its hop. */
export function encodeRetry(r: { reply: string; outcome: string; retryAt: number; hop: number }): string[] {
  return [
    F.lastReply,
    r.reply.slice(0, REPLY_MAX),
    F.lastOutcome,
    r.outcome,
    F.retryAt,
    String(r.retryAt),
    F.hop,
    String(r.hop),
  ];
}

/** What a message given back to admission writes besides its state: why (`lastOutcome`), its hop. */
export function encodeRequeue(r: { reason?: string | undefined; hop: number }): string[] {
  return [...(r.reason === undefined ? [] : [F.lastOutcome, r.reason]), F.hop, String(r.hop)];
}

const num = (v: string | undefined): number => (v === undefined ? 0 : Number(v));

/** The API key and address a message came with over HTTP, if it did. */
function originOf(h: HashFields): { origin?: MessageOrigin } {
  const keyId = h[F.apiKey];
  return keyId === undefined ? {} : { origin: { keyId, source: h[F.source] ?? '' } };
}

/** A record as `messages.status(id)` shows it; `null` for no record (no `state`). */
export function decodeRecord(keys: Keys, id: string, h: HashFields): MessageRecord | null {
  if (!h[F.state]) return null;
  const priority = h[F.priority] as PriorityClass;
  const campaignId = h[F.campaignId] || undefined;
  return {
    id,
    state: h[F.state] as MessageState,
    priority,
    to: h[F.to] ?? '',
    tenantId: h[F.tenantId] ?? 'default',
    campaignId,
    queue: campaignId ? keys.campaignQueue(campaignId) : keys.intakeQueue(priority),
    attempts: num(h[F.attempts]),
    ambiguous: num(h[F.ambiguous]),
    lastReply: h[F.lastReply],
    lastOutcome: h[F.lastOutcome],
    provider: h[F.provider],
    providerMessageId: h[F.providerMessageId],
    receiver: h[F.receiver],
    createdAt: num(h[F.createdAt]),
    updatedAt: num(h[F.updatedAt]),
    finalAt: h[F.finalAt] === undefined ? undefined : num(h[F.finalAt]),
    lastEvent: h[F.event],
    lastEventAt: h[F.eventAt] === undefined ? undefined : num(h[F.eventAt]),
    ...originOf(h),
  };
}

/** The record's fields as stored, for `explain` to show (a field this release does not name too). */
export function decodeFields(h: HashFields): RecordFields {
  return { ...h };
}

/** What `explain` reads of a full record: the record, the scheduler's note, its hop and retry, the fields as stored. */
export interface RecordInspection {
  record: MessageRecord;
  /** Why the scheduler last let it wait ({@link encodeHeld}), if it noted why. */
  held: HeldNote | undefined;
  /** How often it was given back to admission (its dispatch job is `<id>-<hop>`). */
  hop: number;
  /** When its retry is due (epoch ms), while it is `retrying`. */
  retryAt: number | undefined;
  /** Every field as stored, for a person to read. */
  fields: RecordFields;
}

/** A full record as `explain` reads it; `null` for no full record (none, or a compact one). */
export function decodeInspection(keys: Keys, id: string, h: HashFields): RecordInspection | null {
  const record = decodeRecord(keys, id, h);
  if (record === null) return null;
  const by = h[F.heldBy];
  const held =
    by === undefined
      ? undefined
      : { by, key: h[F.heldKey] ?? '', untilMs: num(h[F.heldUntil]), reason: h[F.heldReason] ?? '' };
  const retryAt = h[F.retryAt] === undefined ? undefined : num(h[F.retryAt]);
  return { record, held, hop: num(h[F.hop]), retryAt, fields: decodeFields(h) };
}

/** The record's state alone (null: no record). */
export const RECORD_STATE = hashRead([F.state], (h) => h[F.state] ?? null);

/** The record's tenant ('default' when the record does not say, or is gone). */
export const RECORD_TENANT = hashRead([F.tenantId], (h) => h[F.tenantId] || 'default');

/** What decides whether a final state's suppression applies: the state and the ambiguous attempts. */
export const RECORD_SUPPRESSION_CHECK = hashRead([F.state, F.ambiguous], (h) => ({
  state: h[F.state] ?? null,
  ambiguous: Number(h[F.ambiguous] ?? 0),
}));
