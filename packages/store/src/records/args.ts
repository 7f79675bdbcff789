import { homeOf, type FinalState, type Keys, type MessageState, type QueuedMessage } from '@sluice/core';
import { compactSlot } from './compact.js';
import { encodeDetails, encodeNewRecord } from './codec.js';
import { encodeSuppression } from '../feedback/suppressions.js';

// The arguments of the record scripts, for the store and the injection (which writes a chunk's
// records before its jobs). Every key of one script is in the message's home.

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

/**
 * The key count, keys and arguments of the `finalize` script for messages of one home and one
 * campaign (or none) that end in `state`: one message (`finalize`, the injection) or a batch's
 * recipients (`finalizeBatch`). The first item's `campaignId`, `from` and `ifAmbiguous` are all
 * of theirs. The suppression that may go with a final state is not among them: it is under the
 * tenant's tag ({@link finalSuppression}).
 */
export function finalizeManyArgs(
  keys: Keys,
  ttl: number,
  state: FinalState,
  items: readonly { id: string; d: FinalizeDetails }[],
  now: number,
): [number, ...(string | number)[]] {
  const first = items[0];
  if (first === undefined) throw new Error('finalize: no message');
  const home = homeOf(first.id);
  if (items.some((i) => homeOf(i.id) !== home)) throw new Error('finalize: messages of more than one home');
  const stream = keys.outcomes(home);
  const { campaignId } = first.d;
  const argv: (string | number)[] = [state, now, ttl, (first.d.from ?? []).join(','), first.d.ifAmbiguous ?? ''];
  for (const { id, d } of items) {
    const fields = encodeDetails(d);
    argv.push(id, fields.length, ...fields);
  }
  return [
    items.length + 2,
    campaignId ? keys.campaignHome(campaignId, home) : stream,
    stream,
    ...items.map((i) => keys.message(i.id)),
    ...argv,
  ];
}

/** {@link finalizeManyArgs} of one message. */
export function finalizeArgs(
  keys: Keys,
  ttl: number,
  id: string,
  state: FinalState,
  d: FinalizeDetails,
  now: number,
): [number, ...(string | number)[]] {
  return finalizeManyArgs(keys, ttl, state, [{ id, d }], now);
}

/**
 * The suppression a final state asks for (`suppress` with the recipient and tenant): its key,
 * address and entry, or `undefined`.
 */
export function finalSuppression(
  keys: Keys,
  d: FinalizeDetails,
  now: number,
): { key: string; address: string; entry: string } | undefined {
  if (d.suppress !== true || d.to === undefined || d.tenantId === undefined) return undefined;
  const entry = encodeSuppression({
    source: 'reply',
    at: now,
    provider: d.provider,
    reason: `${d.outcome ?? 'rejected'}: ${d.reply ?? ''}`,
  });
  return { key: keys.suppression(d.tenantId), address: d.to.toLowerCase(), entry };
}

/**
 * The keys and arguments of the `accept` script for a new message's record (with the
 * backend's key of an injected recipient), for a caller that sends it inside its own MULTI.
 */
export function acceptArgs(keys: Keys, message: QueuedMessage): [string, string, string, string, ...string[]] {
  const key = keys.message(message.id);
  const home = homeOf(message.id);
  // An injected recipient whose record was compacted, or is gone, is still known: never accepted twice.
  const compact = compactSlot(keys, message.id);
  return [
    key,
    message.campaignId ? keys.campaignHome(message.campaignId, home) : key,
    compact?.key ?? key,
    compact?.gone ?? key,
    compact?.field ?? '',
    compact?.bit === undefined ? '' : String(compact.bit),
    ...encodeNewRecord(message),
  ];
}
