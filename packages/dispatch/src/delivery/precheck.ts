import {
  circuitId,
  expiresAt,
  isFinalState,
  layerKeysOf,
  layerNamesOf,
  poolOf,
  receiverNamed,
  type DispatchJobData,
  type ReceiverLimit,
} from '@sluice/core';
import { quotaLayers, type ArriveRequest, type OverrideState } from '@sluice/throttle';
import { route } from '../routing/route.js';
import type { DeliveryContext } from './context.js';
import { readmit } from './readmit.js';
import { COUNTED_AS_SENT, logAmbiguous } from './settle.js';

/** A dispatch job as the engine sees it: its data, and how it waits in its queue for a later slot. */
export interface DeliveryJob {
  readonly data: DispatchJobData;
  /**
   * Moves the job back to its dispatch queue with `data`, delayed until `untilMs` (BullMQ:
   * `updateData`, then `moveToDelayed`). The wiring ends the job's run afterwards
   * (`DelayedError`).
   */
  delay(data: DispatchJobData, untilMs: number): Promise<void>;
}

/** What the checks before a send found. */
export type Ready =
  /**
   * Send now: the arrival gate places it just before its final bytes (`arrival.ts`) and the
   * send's `submit` mark counts the attempt. `first`: no attempt was submitted since it was
   * last admitted (a put-off asks admission again).
   */
  | { kind: 'send'; first: boolean }
  /** Nothing to send: given back to admission, final already, counted as sent, or expired. */
  | { kind: 'done' }
  /** Booked for a later slot: the job waits in its dispatch queue ({@link DeliveryJob.delay}). */
  | { kind: 'delayed' };

/** A {@link Ready} that sends nothing now. */
type NotSent = Exclude<Ready, { kind: 'send' }>;

function rerouted(ctx: DeliveryContext, m: DispatchJobData): boolean {
  const { config, adjustments, keys } = ctx;
  const choice = route(config, adjustments, (p) => keys.bucket('provider', p), m.stream);
  return !('provider' in choice) || choice.provider !== m.provider;
}

/** Before a connection slot is taken: whether the provider's standing sent the message back to admission. */
export async function standsAside(ctx: DeliveryContext, m: DispatchJobData): Promise<boolean> {
  // Paused (out of its daily quota) or down since admission: back to admission, which
  // routes elsewhere or waits; no attempt is spent. A down provider with nothing better
  // in its route is still tried (its backoff paces it).
  const standing = ctx.adjustments.standing(m.provider);
  if (standing.state === 'paused' || (standing.state === 'down' && rerouted(ctx, m))) {
    await readmit(ctx, m, `provider ${m.provider} ${standing.state}: ${standing.reason}`);
    return true;
  }
  return false;
}

function loweredSince(ctx: DeliveryContext, m: DispatchJobData): boolean {
  const { adjustments, keys } = ctx;
  const decided = m.decidedAt ?? m.admittedAt;
  const at = Math.max(
    adjustments.loweredAt(keys.bucket('receiver', m.receiver)) ?? 0,
    adjustments.loweredAt(keys.bucket('provider', m.provider)) ?? 0,
  );
  return at > decided;
}

/** A `suspend` override in force on any key the message goes through, if one is. */
function suspendedBy(ctx: DeliveryContext, m: DispatchJobData): OverrideState | undefined {
  const layers = layerKeysOf(ctx.keys, layerNamesOf(ctx.config, m));
  return layers.map((l) => ctx.adjustments.override(l.key)).find((o) => o?.kind === 'suspend');
}

/**
 * The receiver bucket the scheduler chose (by the domain's organisation): the limit the
 * job carries, else looked up by name. No DNS here.
 */
function receiverOf(ctx: DeliveryContext, m: DispatchJobData): ReceiverLimit {
  if (m.receiverLimit === undefined) return receiverNamed(ctx.config, m.receiver);
  return { name: m.receiver, rate: m.receiverLimit.rate, burst: m.receiverLimit.burst };
}

/** The layers a provider or receiver counts arrivals at: provider, receiver and IP pool, at their effective rates. */
export function arrivalLayers(ctx: DeliveryContext, m: DispatchJobData): ArriveRequest['layers'] {
  const subject = { to: m.to, tenantId: m.tenantId, provider: m.provider, receiver: receiverOf(ctx, m) };
  const [provider, receiver, pool] = quotaLayers(ctx.config, ctx.keys, subject, ctx.adjustments).layers;
  return [provider, receiver, pool];
}

/**
 * Admission again, for a first try: how long until its new slot (0: now), or `undefined`
 * once it went back to its intake queue (no slot within its class's horizon).
 */
async function admitAgain(ctx: DeliveryContext, m: DispatchJobData, why: string): Promise<number | undefined> {
  const { config, keys, store, limiter, adjustments } = ctx;
  const campaign = m.campaignId !== undefined ? await store.campaignLimit(m.campaignId) : undefined;
  const subject = { to: m.to, tenantId: m.tenantId, campaign, provider: m.provider, receiver: receiverOf(ctx, m) };
  const { layers } = quotaLayers(config, keys, subject, adjustments);
  const decision = await limiter.admit({
    layers,
    priority: m.priority,
    horizonMs: config.horizonsMs[m.priority],
    waitlist: [],
  });
  if (decision.outcome === 'denied') {
    await readmit(ctx, m, `${why}: admitted again`);
    return undefined;
  }
  return decision.outcome === 'booked' ? decision.waitMs : 0;
}

/** Waits in this dispatch queue for `waitMs`, admitted for then. */
export async function delayFor(ctx: DeliveryContext, job: DeliveryJob, waitMs: number): Promise<NotSent> {
  const at = ctx.clock() + waitMs;
  await job.delay({ ...job.data, admittedAt: at, decidedAt: ctx.clock() }, at);
  return { kind: 'delayed' };
}

/**
 * No room to arrive within `worker.lateAfterMs` (the layers are full with sends late and
 * on time): a first try asks admission again, so its missed slot gives way to a later one
 * (and the scheduler books less new mail while the fleet is behind), and waits for that
 * slot or the room, whichever is later; a try after one that was submitted (its worker died)
 * waits in its queue for the room, its record untouched.
 */
export async function putOff(
  ctx: DeliveryContext,
  job: DeliveryJob,
  room: { waitMs: number; why: string },
  first: boolean,
): Promise<NotSent> {
  const m = job.data;
  if (first) {
    const slotMs = await admitAgain(ctx, m, room.why);
    return slotMs === undefined ? { kind: 'done' } : delayFor(ctx, job, Math.max(slotMs, room.waitMs));
  }
  await job.delay(m, ctx.clock() + room.waitMs);
  return { kind: 'delayed' };
}

/**
 * States a send may start from: never submitted since it was last admitted (`dispatched`: by
 * an older fleet; `sending`: by an older fleet, a record found `submitted` before its resend,
 * or an attempt counted after a request that ended before its final bytes).
 */
const UNSUBMITTED: readonly string[] = ['queued', 'retrying', 'dispatched', 'sending'];

/**
 * With its connection slot held, the checks between admission and the send, on one read
 * of the record and its campaign's pause flag (nothing written on the happy path: the
 * send's `submit` mark counts the attempt): a final message is not sent, a paused
 * campaign's goes back, an outpaced one asks the limiter again, a suspended one goes back,
 * and the arrival gate finds the send room (or puts it off). A record found `submitted`
 * (its last worker died after the request went out) is ambiguous: counted as sent, ended
 * or resent. An expired message is not sent.
 */
export async function precheck(ctx: DeliveryContext, job: DeliveryJob): Promise<Ready> {
  const { config, store, clock } = ctx;
  const m = job.data;
  const base = { campaignId: m.campaignId, provider: m.provider };
  let look = await store.look(m.id, m.campaignId);
  if (look.state === null) {
    await store.accept(m);
    look = await store.look(m.id, m.campaignId);
  }
  if (look.state === null || isFinalState(look.state)) return { kind: 'done' }; // sent, cancelled or expired already: never twice
  if (look.paused) {
    await readmit(ctx, m, 'held: campaign paused');
    return { kind: 'done' };
  }
  const first = UNSUBMITTED.includes(look.state);
  if (!first && (await foundSubmitted(ctx, m))) return { kind: 'done' };
  // Admitted at a rate that has since been lowered (a throttle came back for its receiver
  // or provider): admission decides again at the lowered rate, so the messages behind a
  // throttle wait instead of meeting the same refusal. Only a try after none was submitted:
  // one found submitted goes on below.
  if (first && loweredSince(ctx, m)) {
    const slotMs = await admitAgain(ctx, m, 'rate lowered since admission');
    if (slotMs === undefined) return { kind: 'done' };
    if (slotMs > 0) return delayFor(ctx, job, slotMs);
  }
  // Suspended by an operator since admission: back to admission, which holds it until
  // the override ends (as a paused campaign's mail, above). No attempt is spent.
  const suspended = suspendedBy(ctx, m);
  if (suspended !== undefined) {
    await readmit(ctx, m, `suspended: ${suspended.scope} ${suspended.name}`.slice(0, 60));
    return { kind: 'done' };
  }
  // Its circuit opened since admission (the receiver lists our IPs, or refuses most of what
  // it is sent): back to admission, which holds it until a probe may go, so mail booked
  // before the opening does not meet the same refusal. No attempt is spent.
  const circuit = circuitId({ receiver: m.receiver, pool: poolOf(config, m.provider), stream: m.stream });
  const open = ctx.adjustments.circuit(circuit);
  if (open !== undefined && clock() < open.untilMs) {
    await readmit(ctx, m, `circuit open: ${circuit}`.slice(0, 60));
    return { kind: 'done' };
  }
  // Its recipient receives faster than its mailbox takes (it said so to another message):
  // it waits in its queue until the hold ends. No attempt is spent.
  const heldUntil = ctx.adjustments.recipientHeldUntil(m.to);
  if (heldUntil !== undefined && heldUntil < expiresAt(m, config.delivery.lifetimeMs)) {
    return delayFor(ctx, job, heldUntil - clock());
  }
  if (clock() >= expiresAt(m, config.delivery.lifetimeMs)) {
    // An earlier attempt may have been delivered (ambiguous): then it is `unconfirmed`.
    await store.finalize(m.id, 'expired', { ...base, reply: 'expired before sending', ifAmbiguous: 'unconfirmed' });
    return { kind: 'done' };
  }
  return { kind: 'send', first };
}

/** What the attempt log and the record say of a previous attempt found `submitted`. */
const FOUND_SUBMITTED = 'submitted in full; the worker died before the answer';

/**
 * The previous attempt was found `submitted` (its worker died after the request went out
 * in full): ambiguous. Logged like a live one, then counted as sent, ended `unconfirmed`
 * when the message's lifetime is over, or resent now, as `delivery.onAmbiguous` says.
 * Returns whether there is nothing to send (final, or another run has it).
 */
async function foundSubmitted(ctx: DeliveryContext, m: DispatchJobData): Promise<boolean> {
  const { config, store } = ctx;
  // Counts the attempt found submitted as ambiguous (`ambiguous` + 1), from `submitted`
  // only (a run that lost a race to another finds it moved on, and leaves it to that one),
  // and leaves a state the resend's `submit` mark takes.
  const found = await store.markFoundSubmitted(m.id);
  if (found.result !== 'moved') return true;
  const base = { campaignId: m.campaignId, provider: m.provider };
  const known = { reply: FOUND_SUBMITTED, foundSubmitted: true } as const;
  if (config.delivery.onAmbiguous[m.priority] === 'assume-sent') {
    await logAmbiguous(ctx, m, known, COUNTED_AS_SENT);
    await store.finalize(m.id, 'sent', { ...base, receiver: m.receiver, outcome: 'ambiguous', reply: FOUND_SUBMITTED });
    return true;
  }
  if (ctx.clock() >= expiresAt(m, config.delivery.lifetimeMs)) {
    const why = 'ambiguous: lifetime over before the resend';
    await logAmbiguous(ctx, m, known, `final: unconfirmed (${why})`);
    await store.finalize(m.id, 'expired', {
      ...base,
      outcome: why,
      reply: FOUND_SUBMITTED,
      ifAmbiguous: 'unconfirmed',
    });
    return true;
  }
  await logAmbiguous(ctx, m, known, 'resent now (delivery.onAmbiguous: resend)');
  return false;
}
