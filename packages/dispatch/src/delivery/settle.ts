import { expiresAt, type DispatchJobData } from '@sluice/core';
import type { Outcome } from '@sluice/providers';
import { planRetry } from './retry.js';
import { familyOf, type DeliveryContext, type RetryOutcome } from './context.js';
import { readmit } from './readmit.js';

/** What `delivery.onAmbiguous: assume-sent` does with an attempt nobody answered. */
export const COUNTED_AS_SENT = 'final: counted as sent (delivery.onAmbiguous: assume-sent)';

/**
 * Records an ambiguous attempt (submitted in full, never answered): in its attempt log,
 * with what is known and what was done, and as a warn line, since it is the one outcome
 * where mail may have reached the recipient without anyone knowing.
 */
export async function logAmbiguous(
  ctx: DeliveryContext,
  m: DispatchJobData,
  known: { reply: string; foundSubmitted?: true },
  action: string,
): Promise<void> {
  ctx.logger.warn(
    {
      id: m.id,
      provider: m.provider,
      priority: m.priority,
      campaignId: m.campaignId,
      reply: known.reply,
      foundSubmitted: known.foundSubmitted ?? false,
      action,
    },
    'ambiguous attempt: submitted in full, no answer; it may have been delivered',
  );
  await ctx.store.logAttempt(m.id, {
    at: ctx.clock(),
    provider: m.provider,
    outcome: 'ambiguous',
    ...known,
    action,
  });
}

/** Records one attempt in the message's attempt log (an ambiguous one also as a warn line). */
async function logAttempt(ctx: DeliveryContext, m: DispatchJobData, outcome: Outcome, action: string): Promise<void> {
  if (outcome.kind === 'ambiguous') return logAmbiguous(ctx, m, { reply: outcome.reply }, action);
  const classified =
    outcome.kind === 'accepted' ? {} : { family: outcome.family, rule: outcome.rule, classifier: outcome.version };
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
 * Whether any attempt of the message was ambiguous: this one, or one the record counts (a
 * copy may have been delivered, so giving up ends `unconfirmed`, not `rejected`/`expired`).
 */
async function everAmbiguous(ctx: DeliveryContext, m: DispatchJobData, outcome: RetryOutcome): Promise<boolean> {
  if (outcome.kind === 'ambiguous') return true;
  return ((await ctx.store.get(m.id))?.ambiguous ?? 0) > 0;
}

/**
 * After a temporary failure or an ambiguous attempt: another attempt through admission
 * after the family's backoff, or a final state when the attempts or the message's lifetime
 * are used up: `unconfirmed` if any attempt was ambiguous, else `rejected` or `expired`.
 */
async function retryOrEnd(
  ctx: DeliveryContext,
  m: DispatchJobData,
  outcome: RetryOutcome,
  log: (action: string) => Promise<void>,
): Promise<void> {
  const { config, store } = ctx;
  // `ifAmbiguous`: the finalize script decides on the record's count, so this and every
  // other path that gives up (admission's expiry) agree; `unconfirmed` here only names it.
  const base = {
    campaignId: m.campaignId,
    provider: m.provider,
    reply: outcome.reply,
    ifAmbiguous: 'unconfirmed' as const,
  };
  const family = familyOf(outcome);
  const plan = planRetry(config, family, m.retry, outcome.kind === 'ambiguous' ? undefined : outcome.retryAfterMs);
  const expires = expiresAt(m, config.delivery.lifetimeMs);
  if (plan.retry && ctx.clock() + plan.delayMs < expires) {
    await log(`retry in ${plan.delayMs} ms`);
    await readmit(ctx, m, family, { ...plan, outcome });
    return;
  }
  const why = plan.retry ? `${family}: lifetime over before the next attempt` : plan.why;
  const unconfirmed = await everAmbiguous(ctx, m, outcome);
  if (unconfirmed) await log(`final: unconfirmed (${why}; an attempt was submitted and never answered)`);
  else await log(plan.retry ? 'final: expired' : `final: rejected (${plan.why})`);
  await store.finalize(m.id, plan.retry ? 'expired' : 'rejected', { ...base, outcome: why });
}

/**
 * A batch's recipients the ESP accepted on their first attempt, all of one home and campaign:
 * `sent` in one script (`finalizeBatch`), as {@link settle} would end each (no log entry on a
 * first attempt's success); the others go through `settle` one by one.
 */
export async function settleSent(
  ctx: DeliveryContext,
  sent: readonly { m: DispatchJobData; outcome: Extract<Outcome, { kind: 'accepted' }> }[],
): Promise<void> {
  const done = await ctx.store.finalizeBatch(
    'sent',
    sent.map(({ m, outcome }) => ({
      id: m.id,
      d: {
        campaignId: m.campaignId,
        provider: m.provider,
        receiver: m.receiver,
        outcome: 'accepted',
        providerMessageId: outcome.providerMessageId,
      },
    })),
  );
  const now = ctx.clock();
  for (const [i, { m }] of sent.entries()) {
    if (!done[i]) continue;
    ctx.latency.record(m.priority, now - m.acceptedAt);
    ctx.metrics.delivered(m.priority, (now - m.acceptedAt) / 1000);
  }
}

/**
 * The outcome table: what an attempt's outcome leads to. Accepted → `sent`; rejected →
 * `rejected` (the recipient suppressed when the address is bad), even after an ambiguous
 * attempt: a refusal is an answer; ambiguous → counted as sent or resent, as
 * `delivery.onAmbiguous` says for its class; throttled and deferred → a retry through
 * admission. Out of attempts or lifetime: `unconfirmed` if any attempt was ambiguous,
 * else `rejected` (attempts) or `expired` (lifetime).
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
      // bytes keeps the record a small listpack (docs/design/bullmq.md). A first
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
        const ms = ctx.clock() - m.acceptedAt;
        ctx.latency.record(m.priority, ms);
        ctx.metrics.delivered(m.priority, ms / 1000);
      }
      return;
    case 'rejected':
      if (outcome.family === 'mailbox_full') {
        // Not suppressed on one reply: only once the mailbox has been full too often.
        const { suppressed, count } = await store.countMailboxFull(
          { tenantId: m.tenantId, address: m.to, messageId: m.id, provider: m.provider, reply: outcome.reply },
          config.suppression.mailboxFull,
        );
        await log(
          suppressed
            ? `final: rejected, recipient suppressed (mailbox full ${count} times)`
            : `final: rejected (mailbox full ${count} of ${config.suppression.mailboxFull.count})`,
        );
      } else await log(outcome.suppress ? 'final: rejected, recipient suppressed' : 'final: rejected');
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
      await store.markAmbiguous(m.id);
      if (config.delivery.onAmbiguous[m.priority] === 'assume-sent') {
        await log(COUNTED_AS_SENT);
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
