import type { ServerResponse } from 'node:http';
import type { AcceptedMessage } from '../recorder.js';
import type { SandboxContext } from './context.js';
import type { Decision } from './policy.js';

/** How one HTTP ESP words each outcome of a send. */
export interface HttpAnswers {
  /** A hard bounce of `address`. */
  bounce(address: string): void;
  /** A transient failure (5xx). */
  fail(): void;
  /** The domain's rate is exceeded; a token is back in `retryAfterMs`. */
  throttle(retryAfterMs: number): void;
  /** The message was accepted (and recorded). */
  accept(): void;
}

/**
 * Carries out a decision for an HTTP send the same way on every ESP: count it, record an
 * accepted message, wait the latency, answer. A message to drop after its data is recorded
 * (it "was delivered") and its connection destroyed unanswered, so the client cannot tell.
 * Receiver-side refusals (block, defer) are accepted: an HTTP ESP reports them by webhook,
 * as it reports the scenario's bounce and complaint rates.
 */
export async function carryOut(
  ctx: SandboxContext,
  res: ServerResponse,
  domain: string,
  decision: Decision,
  accepted: AcceptedMessage | readonly AcceptedMessage[],
  answers: HttpAnswers,
): Promise<void> {
  // A request of several copies (SendGrid personalizations) is decided once, arrives as each.
  const copies: readonly AcceptedMessage[] = Array.isArray(accepted) ? accepted : [accepted as AcceptedMessage];
  // What the logs name: the protocol and the request's id (a batch whose copies all bounced has none).
  const message: Partial<AcceptedMessage> = copies[0] ?? {};
  switch (decision.kind) {
    case 'bounce':
      ctx.recorder.count(domain, 'rejected');
      ctx.logger.debug({ domain, address: decision.address, protocol: message.protocol }, 'rejected (hard bounce)');
      await ctx.wait(decision.latencyMs);
      answers.bounce(decision.address);
      return;
    case 'fail':
      ctx.recorder.count(domain, 'deferred');
      ctx.logger.debug({ domain, address: decision.address, protocol: message.protocol }, 'failed (transient)');
      await ctx.wait(decision.latencyMs);
      answers.fail();
      return;
    case 'throttle':
      ctx.recorder.count(domain, 'throttled');
      ctx.logger.debug({ domain, protocol: message.protocol }, 'throttled');
      await ctx.wait(decision.latencyMs);
      answers.throttle(decision.retryAfterMs);
      return;
    default: {
      for (const copy of copies) {
        const { duplicate } = ctx.recorder.accept(copy);
        const { protocol, providerMessageId, messageId } = copy;
        ctx.logger.debug({ domain, protocol, providerMessageId, messageId, duplicate }, 'accepted');
        // Dropped after its data or not, it was delivered: what the receiver does next is reported.
        ctx.report(copy);
      }
      const { protocol, providerMessageId } = message;
      if (decision.kind === 'accept' && decision.dropAfterData) {
        ctx.recorder.count(domain, 'dropped');
        ctx.logger.debug({ domain, protocol, providerMessageId }, 'dropped after data');
        res.destroy();
        return;
      }
      await ctx.wait(decision.latencyMs);
      answers.accept();
    }
  }
}
