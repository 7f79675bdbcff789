import { systemClock, type IntakeJobData, type ReceiverLimit } from '@sluice/core';
import { quotaLayers, type CampaignLimit } from '@sluice/throttle';
import { checkCircuit } from './circuit.js';
import { createDecider } from './decide.js';
import { dispatch, dispatchData } from './dispatch.js';
import { checkOverrides } from './overrides.js';
import { checkExpiry, checkRecord } from './record.js';
import { chooseRoute, subjectOf, warmUp, type Chosen } from './route.js';
import type { Admission, AdmissionOptions, AdmissionResult, AdmitContext, Deps } from './types.js';

/**
 * Creates the admission engine: the scheduler's checks in their order (docs/design/flow.md) (record and
 * suppression, expiry, route and warm-up, circuit, overrides, class and quotas in one
 * limiter call, dispatch), each a step that goes on or ends the run with one result. It
 * writes records and dispatch jobs; acting on the intake job (delay it, hold its campaign
 * queue) is the caller's, which holds the BullMQ job.
 */
export function createAdmission(options: AdmissionOptions): Admission {
  const deps: Deps = {
    ...options,
    clock: options.clock ?? systemClock,
    random: options.random ?? Math.random,
    batcher: options.batcher,
    plans: options.plans,
  };
  const decider = createDecider(deps);

  /** The checks after the route is settled: circuit, overrides, quotas, dispatch. */
  async function admitRouted(
    m: IntakeJobData,
    now: number,
    ctx: AdmitContext,
    choice: Chosen,
    subject: { campaign: CampaignLimit | undefined; receiver: ReceiverLimit },
  ): Promise<AdmissionResult> {
    const open = await checkCircuit(deps, m, now, { provider: choice.provider, receiver: subject.receiver.name });
    if (open.kind !== 'continue') return open;
    // At the rates in effect (lowered after throttles, capped by the provider's account).
    const { layers, provider, receiver } = quotaLayers(
      deps.config,
      deps.keys,
      {
        to: m.to,
        tenantId: m.tenantId,
        campaign: subject.campaign,
        provider: choice.provider,
        receiver: subject.receiver,
      },
      deps.adjustments,
    );
    const stop = checkOverrides(deps, layers, now, ctx);
    if (stop.kind !== 'continue') return stop;
    // A plan's caps count a message once, at its first admission (`hop` 0).
    const caps = m.hop ? undefined : await deps.plans?.capsOf(m.tenantId, m.origin?.keyId);
    const decided = await decider.decide(m, { layers, provider, receiver, failover: choice.failover, caps }, now, ctx);
    if (decided.kind !== 'continue') return decided;
    const admitted = { provider, receiver: subject.receiver, failover: choice.failover, delay: decided.delay };
    // Campaign mail that may wait goes in a batch, its admission done once the batch is written.
    const { batcher } = deps;
    if (batcher !== undefined && ctx.campaignQueue !== undefined && batcher.takes({ ...m, provider })) {
      const data = dispatchData(m, admitted, now);
      await batcher.add(data);
      return { kind: 'dispatched', data, delay: decided.delay };
    }
    return dispatch(deps, m, admitted, now);
  }

  return {
    async admit(m, ctx = {}) {
      const now = deps.clock();
      const recorded = await checkRecord(deps, m);
      if (recorded.kind !== 'continue') return recorded;
      const fresh = await checkExpiry(deps, m, now);
      if (fresh.kind !== 'continue') return fresh;
      const routed = chooseRoute(deps, m, now, ctx);
      if (routed.kind !== 'continue') return routed;
      const subject = await subjectOf(deps, m);
      const warmed = await warmUp(deps, m, now, routed.choice, subject.receiver);
      if (warmed.kind !== 'continue') return warmed;
      const result = await admitRouted(m, now, ctx, warmed.choice, subject);
      // A warm-up send taken for a message that was not admitted after all goes back, before
      // the caller delays the message or holds its queue.
      if (warmed.taken !== undefined && result.kind !== 'dispatched') {
        await deps.warmup.giveBack(warmed.taken, subject.receiver.name);
      }
      return result;
    },
    close: () => decider.settled(),
  };
}
