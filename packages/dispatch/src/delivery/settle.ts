import { expiresAt, type DispatchJobData } from '@sluice/core';
import type { Outcome } from '@sluice/providers';
import { planRetry } from '../retry.js';
import { familyOf, type DeliveryContext, type RetryOutcome } from './context.js';
import { readmit } from './readmit.js';

/** Records one attempt in the message's attempt log. */
async function logAttempt(ctx: DeliveryContext, m: DispatchJobData, outcome: Outcome, action: string): Promise<void> {
  const classified =
    outcome.kind === 'accepted' || outcome.kind === 'ambiguous'
      ? {}
      : { family: outcome.family, rule: outcome.rule, classifier: outcome.version };
  await ctx.store.logAttempt(m.id, {
    at: ctx.clock(),
    provider: m.provider,
    outcome: outcome.kind,
    reply: outcome.reply,
    ...classified,
    action,
  });
}

/**
 * After a temporary failure: another attempt through admission after the family's
 * backoff, or a final state when the attempts or the message's lifetime are used up.
 */
async function retryOrEnd(
  ctx: DeliveryContext,
  m: DispatchJobData,
  outcome: RetryOutcome,
  log: (action: string) => Promise<void>,
): Promise<void> {
  const { config, store } = ctx;
  const base = { campaignId: m.campaignId, provider: m.provider, reply: outcome.reply };
  const family = familyOf(outcome);
  const plan = planRetry(config, family, m.retry, outcome.kind === 'ambiguous' ? undefined : outcome.retryAfterMs);
  if (!plan.retry) {
    await log(`final: rejected (${plan.why})`);
    await store.finalize(m.id, 'rejected', { ...base, outcome: plan.why });
    return;
  }
  if (ctx.clock() + plan.delayMs >= expiresAt(m, config.delivery.lifetimeMs)) {
    await log('final: expired');
    await store.finalize(m.id, 'expired', { ...base, outcome: `${family}: lifetime over before the next attempt` });
    return;
  }
  await log(`retry in ${plan.delayMs} ms`);
  await readmit(ctx, m, family, { ...plan, outcome });
}

/**
 * The outcome table: what an attempt's outcome leads to. Accepted → `sent`; rejected →
 * `rejected` (the recipient suppressed when the address is bad); ambiguous → counted as
 * sent or resent, as `delivery.onAmbiguous` says for its class; throttled and deferred →
 * a retry through admission, or a final state once attempts or lifetime are used up.
 */
export async function settle(
  ctx: DeliveryContext,
  m: DispatchJobData,
  outcome: Outcome,
  attempt: number,
): Promise<void> {
  const { config, store } = ctx;
  const base = { campaignId: m.campaignId, provider: m.provider };
  // Each attempt's log entry is written before the state it leads to, so whoever sees
  // the message final (or retrying) sees its whole log.
  const log = (action: string): Promise<void> => logAttempt(ctx, m, outcome, action);
  switch (outcome.kind) {
    case 'accepted':
      // No reply text on success: the provider's id says it, and every value under 64
      // bytes keeps the record a small listpack (DESIGN.md, BullMQ facts). A first
      // attempt's success is in the record alone; after failures the log tells the story.
      if (attempt > 1) await log('final: sent');
      if (
        await store.finalize(m.id, 'sent', {
          ...base,
          receiver: m.receiver,
          outcome: 'accepted',
          providerMessageId: outcome.providerMessageId,
        })
      ) {
        ctx.latency.record(m.priority, ctx.clock() - m.acceptedAt);
      }
      return;
    case 'rejected':
      await log(outcome.suppress ? 'final: rejected, recipient suppressed' : 'final: rejected');
      await store.finalize(m.id, 'rejected', {
        ...base,
        outcome: outcome.family,
        reply: outcome.reply,
        suppress: outcome.suppress,
        to: m.to,
        tenantId: m.tenantId,
      });
      return;
    case 'ambiguous':
      await store.transition(m.id, 'submitted', { ambiguous: true });
      if (config.delivery.onAmbiguous[m.priority] === 'assume-sent') {
        await log('final: counted as sent (delivery.onAmbiguous: assume-sent)');
        await store.finalize(m.id, 'sent', {
          ...base,
          receiver: m.receiver,
          outcome: 'ambiguous',
          reply: outcome.reply,
        });
        return;
      }
      // Resent with the same Message-ID (delivery.onAmbiguous: resend).
      await retryOrEnd(ctx, m, outcome, log);
      return;
    case 'throttled':
    case 'deferred':
      await retryOrEnd(ctx, m, outcome, log);
      return;
  }
}
