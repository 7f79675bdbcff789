import type { FinalState, Keys, MessageState, QueuedMessage } from '@sluice/core';
import { compactSlot } from './compact.js';
import { encodeDetails, encodeNewRecord } from './codec.js';
import { encodeSuppression } from '../feedback/suppressions.js';

// The arguments of the record scripts that a caller may also send inside its own MULTI
// (the injection writes a chunk's records with its jobs).

/** Details written with a final state or a retry. */
export interface OutcomeDetails {
  reply?: string | undefined;
  outcome?: string | undefined;
  provider?: string | undefined;
  providerMessageId?: string | undefined;
  /** The receiver it was sent to, kept on the record (the ESP's later events count under it). */
  receiver?: string | undefined;
  /** Suppress the recipient for its tenant (permanent failures). */
  suppress?: boolean | undefined;
  /**
   * The final state to end in instead when the record counts an ambiguous attempt (a copy
   * may have been delivered): `unconfirmed` where attempts or lifetime ran out without an
   * answer. Decided in the same Lua call, so every path that gives up agrees.
   */
  ifAmbiguous?: FinalState | undefined;
}

/** Details of `finalize`. */
export type FinalizeDetails = OutcomeDetails & {
  tenantId?: string;
  campaignId?: string | undefined;
  to?: string;
  from?: readonly MessageState[];
};

/** The keys and arguments of the `finalize` script, for `finalize` and a caller's own MULTI. */
export function finalizeArgs(
  keys: Keys,
  ttl: number,
  id: string,
  state: FinalState,
  d: FinalizeDetails,
  now: number,
): [string, string, string, string, ...(string | number)[]] {
  const key = keys.message(id);
  const suppress = d.suppress === true && d.to !== undefined && d.tenantId !== undefined;
  return [
    key,
    d.campaignId ? keys.campaign(d.campaignId) : key,
    suppress ? keys.suppression(d.tenantId!) : key,
    keys.outcomes(),
    state,
    now,
    ttl,
    suppress ? d.to!.toLowerCase() : '',
    suppress
      ? encodeSuppression({
          source: 'reply',
          at: now,
          provider: d.provider,
          reason: `${d.outcome ?? 'rejected'}: ${d.reply ?? ''}`,
        })
      : '',
    (d.from ?? []).join(','),
    d.ifAmbiguous ?? '',
    id,
    ...encodeDetails(d),
  ];
}

/**
 * The record an ESP event is noted on (apply-event-4.lua's KEYS[4]: it writes the record's
 * `event` and `eventAt`), or `fallback` when the event names no message.
 */
export function eventRecordKey(keys: Keys, messageId: string | undefined, fallback: string): string {
  return messageId ? keys.message(messageId) : fallback;
}

/**
 * The keys and arguments of the `accept` script for a new message's record (with the
 * backend's key of an injected recipient), for a caller that sends it inside its own MULTI.
 */
export function acceptArgs(keys: Keys, message: QueuedMessage): [string, string, string, string, ...string[]] {
  const key = keys.message(message.id);
  // An injected recipient whose record was compacted, or is gone, is still known: never accepted twice.
  const compact = compactSlot(keys, message.id);
  return [
    key,
    message.campaignId ? keys.campaign(message.campaignId) : key,
    compact?.key ?? key,
    compact?.gone ?? key,
    compact?.field ?? '',
    compact?.position === undefined ? '' : String(compact.position),
    ...encodeNewRecord(message),
  ];
}
