import { LAYER_KINDS, layerNamesOf, type IntakeJobData } from '@sluice/core';
import { batchLimitOf } from '@sluice/providers';
import type { AdmitRequest, CapReached, Layers } from '@sluice/throttle';
import type { AdmitContext, Deps, Step } from './types.js';

/** The limiter's side of admission, with what this process remembers of held campaign queues. */
export interface Decider {
  /**
   * Checks 3–5, class (reserve and horizon) and the quotas, in one atomic limiter call.
   * Granted or booked: goes on with the delay until its slot. Denied: the message waits its
   * turn, or its campaign queue is held.
   */
  decide(m: IntakeJobData, admitted: Admitted, now: number, ctx: AdmitContext): Promise<Step<{ delay: number }>>;
  /** Waits for the decisions in flight. */
  settled(): Promise<void>;
}

/** Where a message would go: its layers at the rates in effect, and their names. */
export interface Admitted {
  layers: Layers;
  provider: string;
  receiver: string;
  failover: boolean;
  /** The plan caps it counts against (its first admission only: a trip back was counted). */
  caps?: AdmitRequest['caps'];
}

/** Creates the decider of one admission engine. */
export function createDecider(deps: Pick<Deps, 'config' | 'limiter' | 'clock'>): Decider {
  const { config, limiter, clock } = deps;
  // A campaign queue held by a campaign-wide layer: jobs already fetched go back without
  // asking the limiter again until then.
  const heldUntil = new Map<string, number>();
  const inFlight = new Set<Promise<unknown>>();
  const isHeld = (queue: string): boolean => (heldUntil.get(queue) ?? 0) > clock();
  const refetch = refetchLatency(clock);

  /**
   * Campaign mail that goes in batches borrows a reserve only `batches.lendAheadMs` ahead (when
   * shorter than `reserves.lendAheadMs`): a block's recipients ask side by side and come back
   * together when a reserve is lendable, so they take every slot lending allows each time, and
   * the reserve's own class (an OTP) would wait its whole reach at every moment (decision 0025).
   */
  function batchedLendMs(m: IntakeJobData, admitted: Admitted): number | undefined {
    if (config.reserves.lendAheadMs === null || m.campaignId === undefined || !config.batches.enabled) return undefined;
    if (m.priority !== 'normal' && m.priority !== 'low') return undefined;
    const provider = config.providers[admitted.provider];
    if (provider === undefined || (batchLimitOf(provider) ?? 1) < 2) return undefined;
    return config.batches.lendAheadMs;
  }

  /**
   * How long a campaign-wide denial holds the queue: until half the horizon is free again, or
   * until a reserve it may borrow is lendable, less what the queue takes to bring its next job
   * here (or the reserve idles that long each time).
   */
  function holdOf(decision: { waitMs: number; lendWaitMs?: number }, m: IntakeJobData): number {
    const busyMs = decision.waitMs + Math.ceil(config.horizonsMs[m.priority] / 2);
    const lendMs = decision.lendWaitMs === undefined ? Infinity : Math.max(1, decision.lendWaitMs - refetch.ms());
    return Math.min(busyMs, lendMs);
  }

  async function decide(
    m: IntakeJobData,
    admitted: Admitted,
    now: number,
    ctx: AdmitContext,
  ): Promise<Step<{ delay: number }>> {
    const queue = ctx.campaignQueue;
    const request: AdmitRequest = {
      layers: admitted.layers,
      priority: m.priority,
      // Failover takes only what its target has free now, never booking ahead of the
      // target's own traffic: the target is not flooded by another provider's backlog.
      horizonMs: admitted.failover ? 0 : config.horizonsMs[m.priority],
      // A campaign-wide layer holds the whole campaign queue instead (below).
      waitlist: queue !== undefined ? (['receiver'] as const) : LAYER_KINDS,
      ticket: m.ticket,
      lendAheadMs: batchedLendMs(m, admitted),
      // A campaign queue is held whole when a campaign-wide layer denies one of its messages:
      // its later requests in the same limiter call are answered so without being decided.
      group: queue,
      caps: admitted.caps,
    };
    // Once a decision found the campaign held, the jobs fetched with it go back without asking
    // the limiter. The others go to the limiter as they come: its calls of one tick are one
    // script that decides them one after another in the order asked (a block's recipients in
    // one call), as separate calls would.
    if (queue !== undefined && isHeld(queue)) return { kind: 'held' };
    if (queue !== undefined) refetch.note(queue);
    const asked = limiter.admit(request);
    inFlight.add(asked);
    const decision = await asked.finally(() => inFlight.delete(asked));
    // Granted now, or a slot booked on every layer within the horizon: either way the
    // message is admitted.
    if (decision.outcome !== 'denied')
      return { kind: 'continue', delay: decision.outcome === 'booked' ? decision.waitMs : 0 };

    // Denied beyond the horizon. A campaign-wide layer holds the whole campaign queue
    // (in order, for every scheduler); a receiver holds only this message.
    // It holds until half the horizon is free again: slots booked for the other half keep
    // the sends going meanwhile, and the next pass books many messages per denial. A reserve
    // the campaign may borrow is lent only a short way ahead (`reserves.lendAheadMs`): the
    // hold ends by the time it would idle (`lendWaitMs`), or it would idle through most of it.
    const names = layerNamesOf(config, {
      provider: admitted.provider,
      receiver: admitted.receiver,
      campaignId: m.campaignId,
      tenantId: m.tenantId,
    });
    const capNote = decision.cap && capReason(decision.cap, m, now + decision.waitMs);
    if (queue !== undefined && decision.layer !== 'receiver') {
      // Decided in the same call as the one that held it: that one holds the queue.
      if (isHeld(queue)) return { kind: 'held' };
      const holdMs = holdOf(decision, m);
      heldUntil.set(queue, clock() + holdMs);
      refetch.held(queue, clock() + holdMs);
      return {
        kind: 'hold',
        ms: holdMs,
        note: {
          by: decision.layer,
          key: names[decision.layer],
          untilMs: now + holdMs,
          reason: capNote ? `campaign queue held: ${capNote}` : 'campaign queue held: quota busy',
        },
      };
    }
    // The wait is this message's turn in the receiver's line (or half of it, to see a rate
    // rise early); the ticket goes with the job so it keeps its place.
    const note = {
      by: decision.layer,
      key: names[decision.layer],
      untilMs: now + decision.waitMs,
      reason: capNote ?? 'quota busy: waits its turn',
    };
    const moved =
      decision.ticket && (decision.ticket.number !== m.ticket?.number || decision.ticket.key !== m.ticket.key);
    return moved
      ? { kind: 'wait', at: now + decision.waitMs, note, ticket: decision.ticket }
      : { kind: 'wait', at: now + decision.waitMs, note };
  }

  return {
    decide,
    async settled() {
      await Promise.allSettled([...inFlight]);
    },
  };
}

/** What `explain` says of a message held by a plan cap: whose, which window, until when. */
function capReason(cap: CapReached, m: IntakeJobData, untilMs: number): string {
  const whose = cap.of === 'tenant' ? `tenant ${m.tenantId}` : `key ${m.origin?.keyId ?? '?'}`;
  return `held: ${whose} at its ${cap.window} cap until ${new Date(untilMs).toISOString()}`;
}

/**
 * How long a held campaign queue takes, once its hold ends, to bring its next job to the limiter
 * (BullMQ's wait for the hold, its fetch, the checks before the quotas): a moving average of
 * this scheduler's own, measured at each queue's first request after a hold.
 */
function refetchLatency(clock: () => number) {
  const ends = new Map<string, number>();
  let average = 0;
  return {
    held(queue: string, until: number): void {
      ends.set(queue, until);
    },
    note(queue: string): void {
      const end = ends.get(queue);
      if (end === undefined) return;
      ends.delete(queue);
      average += (Math.min(Math.max(0, clock() - end), MAX_REFETCH_MS) - average) * REFETCH_WEIGHT;
    },
    ms: (): number => Math.round(average),
  };
}

/** The weight of each new measure in {@link refetchLatency}'s average. */
const REFETCH_WEIGHT = 0.2;
/** The most a measure counts for (a hold's end seen late for another reason: a pause, a restart). */
const MAX_REFETCH_MS = 100;
