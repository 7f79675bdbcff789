import { homeOf, type Keys, type MessageState } from '@sluice/core';
import type { StoreRedis } from '../redis/scripts.js';
import {
  batchSubmitResult,
  transitionResult,
  type BatchSubmitResult,
  type TransitionResult,
} from '../redis/results.js';
import { encodeRequeue, encodeRetry } from './codec.js';
import { repairPauseCopy } from '../campaigns/pause.js';

// The moves of a message's record between states that are not final, each one call of
// transition-3.lua. The script's modes are this module's alone: a caller names the move.

/** Options of a worker's attempt. */
export interface AttemptOptions {
  /** Its campaign: the attempt is held (nothing changes, `held`) while the campaign is paused. */
  campaignId?: string | undefined;
}

/** A message given back to admission to be retried. */
export interface RetryMark {
  /** The reply of the attempt that failed (cut at 2,000 characters) and its family. */
  reply: string;
  outcome: string;
  /** When the retry is due (epoch ms). */
  retryAt: number;
  /** Its trips through admission so far (its dispatch job is `<id>-<hop>`). */
  hop: number;
  /** Its first temporary failure: published on the outcome stream (state `deferred`) in the same call. */
  firstDeferral?: boolean;
}

/** The named moves of a record (every one `missing` without a record, `final` on a final one). */
export interface RecordTransitions {
  /**
   * The move to `dispatched`, from `queued` or `retrying` only (`skipped` otherwise); clears the
   * scheduler's held note. Only a fleet older than 2026.12 made it at admission (this release's
   * admission writes no record: the dispatch job says a message is admitted); admission still
   * reads such a record, and the tests make one with this.
   */
  markDispatched(id: string): Promise<TransitionResult>;
  /**
   * A worker's attempt (to `sending`) when its request ended before its final bytes: counts the
   * attempt; reports `ambiguous` when the record said `submitted` (a run before died after its
   * request went out in full).
   */
  markSending(id: string, options?: AttemptOptions): Promise<TransitionResult>;
  /**
   * The worker's mark before a request's final bytes (to `submitted`): counts the attempt,
   * clears the held note, and is `skipped` on a record that says `submitted` already (another
   * run's request is out, or its worker died after it was).
   */
  markSubmitted(id: string, options?: AttemptOptions): Promise<TransitionResult>;
  /**
   * The worker's mark before a batch's final bytes: every record to `submitted`, all or none
   * (`submit-n.lua`; docs/design/batches.md). Every id must be of one message home and of
   * `campaignId` when given. Refused for some (final, missing, `submitted` already): nothing
   * changed, and the others go in a request of their own.
   */
  markSubmittedBatch(ids: readonly string[], options?: AttemptOptions): Promise<BatchSubmitResult>;
  /**
   * An attempt submitted in full whose answer was lost: counts it ambiguous and stays
   * `submitted`. Only from `submitted` (`skipped` otherwise).
   */
  markAmbiguous(id: string): Promise<TransitionResult>;
  /**
   * A previous attempt found `submitted` (its worker died before the answer): counts it
   * ambiguous and moves to `sending`, where the resend's `markSubmitted` takes it. Only from
   * `submitted` (`skipped` otherwise: another run moved it on).
   */
  markFoundSubmitted(id: string): Promise<TransitionResult>;
  /** Given back to admission to be retried (to `retrying`), with its reply, family, time and hop. */
  markRetrying(id: string, retry: RetryMark): Promise<TransitionResult>;
  /** Given back to admission without a retry (to `queued`): why (its last outcome) and its hop. */
  markRequeued(id: string, requeue: { reason?: string | undefined; hop: number }): Promise<TransitionResult>;
}

/** transition-3.lua's ARGV[2]: what kind of move it makes (see the script's header). */
const MODE = {
  plain: '',
  attempt: 'attempt',
  submit: 'submit',
  ambiguous: 'ambiguous',
  from: (states: readonly MessageState[]) => `from:${states.join(',')}`,
  firstDeferral: (id: string) => `deferred:${id}`,
} as const;

/** The named moves on a connection with the store's scripts. */
export function createTransitions(redis: StoreRedis, keys: Keys): RecordTransitions {
  async function move(
    id: string,
    state: MessageState,
    mode: string,
    campaignId?: string,
    fields: readonly string[] = [],
  ): Promise<TransitionResult> {
    const key = keys.message(id);
    const home = homeOf(id);
    const campaign = campaignId ? keys.campaignHome(campaignId, home) : key;
    const run = async () =>
      transitionResult(
        await redis.sluiceTransition(key, campaign, keys.outcomes(home), state, mode, Date.now(), ...fields),
      );
    const result = await run();
    // Held by the pause flag's copy in its home: moved after all if the campaign is not paused.
    if (result.result === 'held' && campaignId && !(await repairPauseCopy(redis, keys, campaignId, home))) return run();
    return result;
  }

  async function submitBatch(ids: readonly string[], campaignId: string | undefined): Promise<BatchSubmitResult> {
    const home = homeOf(ids[0]!);
    const other = ids.find((id) => homeOf(id) !== home);
    if (other !== undefined) throw new Error(`a batch spans message homes: ${ids[0]} and ${other}`);
    const records = ids.map((id) => keys.message(id));
    const campaign = campaignId ? keys.campaignHome(campaignId, home) : records[0]!;
    const run = async () =>
      batchSubmitResult(await redis.sluiceSubmitBatch(records.length + 1, campaign, ...records, Date.now()));
    const result = await run();
    // Held by the pause flag's copy in its home: moved after all if the campaign is not paused.
    if (result.result === 'held' && campaignId && !(await repairPauseCopy(redis, keys, campaignId, home))) return run();
    return result;
  }

  return {
    markSubmittedBatch: (ids, o = {}) => submitBatch(ids, o.campaignId),
    markDispatched: (id) => move(id, 'dispatched', MODE.from(['queued', 'retrying'])),
    markSending: (id, o = {}) => move(id, 'sending', MODE.attempt, o.campaignId),
    markSubmitted: (id, o = {}) => move(id, 'submitted', MODE.submit, o.campaignId),
    markAmbiguous: (id) => move(id, 'submitted', MODE.ambiguous),
    markFoundSubmitted: (id) => move(id, 'sending', MODE.ambiguous),
    markRetrying: (id, r) =>
      move(id, 'retrying', r.firstDeferral ? MODE.firstDeferral(id) : MODE.plain, undefined, encodeRetry(r)),
    markRequeued: (id, r) => move(id, 'queued', MODE.plain, undefined, encodeRequeue(r)),
  };
}
