import type { DispatchJobData } from '@sluice/core';
import { messageIdHeader, type Outcome, type Provider } from '@sluice/providers';
import type { Store, TransitionResult } from '@sluice/store';
import { NoRoom } from './arrival.js';
import type { OnStep } from './steps.js';

/** What a send came to: the provider's outcome and the attempt's number, or a refusal. */
export type Sent =
  /**
   * The attempt is counted (attempt number `attempt`); the outcome is the provider's, and
   * `seconds` how long the provider call took, less the wait at its gate (Sluice's own).
   */
  | { kind: 'outcome'; outcome: Outcome; attempt: number; seconds: number }
  /**
   * The mark refused the request before its final bytes (the ESP has an incomplete one it
   * discards): the message is final, its campaign paused, or its record `submitted` already.
   * Or the request ended before its final bytes and the message went final meanwhile.
   */
  | { kind: 'refused'; result: Exclude<TransitionResult['result'], 'moved'> }
  /** Given up before its final bytes and the mark, nothing counted: no room at the arrival gate. */
  | { kind: 'put-off'; room: NoRoom };

/** The gate's refusal, which aborts the request: the adapter sees a failed gate. */
class MarkRefused extends Error {}

/**
 * The provider call, with the message's stable `Message-ID`. The request's final bytes
 * wait until the arrival gate has placed the send (`onTime`, which may put it off: nothing
 * counted) and the record says `submitted` (the adapter's gate): the mark counts the attempt
 * and refuses a final record, a paused campaign and a record another run submitted, in one
 * Lua call. `receiver` is the recipient's receiving organisation, for reading its replies.
 * A crash before the mark leaves the ESP an incomplete request (safe to resend),
 * one after it is known to be ambiguous. Redis unreachable at the gate: the request is
 * aborted, a transient failure. A request that ended before its final bytes (refused at
 * RCPT, a connection refused or lost, the mark failed) had no mark: its attempt is counted
 * after it.
 */
export async function send(
  store: Store,
  provider: Provider,
  m: DispatchJobData,
  receiver: string | undefined,
  onTime: () => Promise<void>,
  onStep?: OnStep,
): Promise<Sent> {
  let marked: Promise<TransitionResult> | undefined;
  let putOff: NoRoom | undefined;
  let gate: Promise<void> | undefined;
  let gateMs = 0;
  const started = performance.now();
  const outcome = await provider.send(m, {
    messageIdHeader: messageIdHeader(m),
    ...(receiver !== undefined ? { receiver } : {}),
    beforeSubmit: () =>
      (gate ??= (async () => {
        const gated = performance.now();
        try {
          onStep?.('withheld', m.id);
          await onTime().catch((e: unknown) => {
            if (e instanceof NoRoom) putOff = e;
            throw e;
          });
          marked = store.markSubmitted(m.id, { campaignId: m.campaignId });
          const t = await marked;
          if (t.result !== 'moved') throw new MarkRefused(`submit refused: ${t.result}`);
          onStep?.('marked', m.id);
        } finally {
          gateMs = performance.now() - gated;
        }
      })()),
  });
  const seconds = Math.max(0, performance.now() - started - gateMs) / 1000;
  if (putOff && !marked) return { kind: 'put-off', room: putOff };
  // A request given up while its gate was pending (timed out) did not wait for the mark:
  // the outcome is settled only once the mark is written, never before it.
  const mark = (await marked?.catch(() => undefined)) ?? (await store.markSending(m.id));
  if (mark.result !== 'moved') return { kind: 'refused', result: mark.result };
  return { kind: 'outcome', outcome, attempt: mark.attempts, seconds };
}
