import { poolOf, recipientDomain, type IntakeJobData, type ReceiverLimit } from '@sluice/core';
import type { CampaignLimit } from '@sluice/throttle';
import { route, type RouteChoice, type RouteOptions } from '../routing/route.js';
import { jitter, type AdmitContext, type Deps, type Step } from './types.js';

/** A provider the message may go to now. */
export type Chosen = Exclude<RouteChoice, { waitMs: number }>;

type RouteDeps = Pick<Deps, 'config' | 'adjustments' | 'warmup' | 'keys' | 'random'>;

function choose(deps: RouteDeps, m: IntakeJobData, now: number, exclude?: RouteOptions['exclude']): RouteChoice {
  const { config, adjustments, warmup, keys } = deps;
  const options: RouteOptions = { poolState: (pool) => warmup.stateOf(pool), random: deps.random, now };
  if (exclude) options.exclude = exclude;
  return route(config, adjustments, (p) => keys.bucket('provider', p), m.stream, options);
}

/**
 * Check 4, routing: the stream's provider by weight, another while it is down, paused or
 * throttled hard. Every provider of the route paused: the message waits (a campaign's
 * whole queue is held).
 */
export function chooseRoute(
  deps: RouteDeps,
  m: IntakeJobData,
  now: number,
  ctx: AdmitContext,
): Step<{ choice: Chosen }> {
  const choice = choose(deps, m, now);
  if (!('waitMs' in choice)) return { kind: 'continue', choice };
  const note = { by: 'provider', key: m.stream, untilMs: now + choice.waitMs, reason: choice.reason };
  return ctx.campaignQueue !== undefined
    ? { kind: 'hold', ms: choice.waitMs, note }
    : { kind: 'wait', at: now + choice.waitMs, note };
}

/** What the circuit and the quotas are keyed by besides the route: the campaign's limit and the receiver. */
export async function subjectOf(
  deps: Pick<Deps, 'store' | 'organisations'>,
  m: IntakeJobData,
): Promise<{ campaign: CampaignLimit | undefined; receiver: ReceiverLimit }> {
  const campaign = m.campaignId !== undefined ? await deps.store.campaignLimit(m.campaignId) : undefined;
  // The receiver is the domain's organisation by its MX hosts: from the cache without an
  // await; a miss waits for DNS, at most organisations.timeoutMs.
  const domain = recipientDomain(m.to);
  const receiver = deps.organisations.knownReceiverOf(domain) ?? (await deps.organisations.receiverOf(domain));
  return { campaign, receiver };
}

/**
 * Check 4, warm-up: a warming pool takes up to its cap of the day for this receiver
 * (`taken`: the pool whose send was taken, to give back if the message is not admitted).
 * Beyond it the message goes to an active pool of its route; with none it waits for the
 * next day. A failover onto a warming pool gets no more: a backlog never moves onto cold IPs.
 */
export async function warmUp(
  deps: RouteDeps,
  m: IntakeJobData,
  now: number,
  choice: Chosen,
  receiver: ReceiverLimit,
): Promise<Step<{ choice: Chosen; taken: string | undefined }>> {
  const { config, warmup } = deps;
  const pool = poolOf(config, choice.provider);
  if (warmup.stateOf(pool) !== 'warming') return { kind: 'continue', choice, taken: undefined };
  if (await warmup.take(pool, receiver.name)) return { kind: 'continue', choice, taken: pool };
  const other = choose(deps, m, now, (p) => warmup.stateOf(poolOf(config, p)) === 'warming');
  const reason = `day's cap for ${receiver.name} reached`;
  if ('waitMs' in other) {
    const at = Math.min(warmup.dayEndsAt(pool), now + other.waitMs) + jitter(deps);
    return { kind: 'wait', at, note: { by: 'warmup', key: pool, untilMs: at, reason } };
  }
  // The rest of the route is down: a worker would hand the message straight back (the
  // warming pool is the better route there), and round it would go without end. It waits
  // for the day's end or the provider's return instead, as with no provider at all.
  const standing = deps.adjustments.standing(other.provider);
  if (standing.state === 'down') {
    const at = Math.min(warmup.dayEndsAt(pool), standing.untilMs) + jitter(deps);
    return {
      kind: 'wait',
      at,
      note: { by: 'warmup', key: pool, untilMs: at, reason: `${reason}; ${other.provider} is down` },
    };
  }
  return { kind: 'continue', choice: other, taken: undefined };
}
