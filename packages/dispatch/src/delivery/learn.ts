import { circuitId, layerKeysOf, layerNamesOf, poolOf, type DispatchJobData } from '@sluice/core';
import type { Outcome } from '@sluice/providers';
import type { SignalKey } from '@sluice/throttle';
import { replyMatcher } from './reply-match.js';
import type { DeliveryContext } from './context.js';

/** What a process learns from its attempts' outcomes. */
export interface Learner {
  /** Counts an outcome's signals and acts on what it says about its keys and provider. */
  learn(m: DispatchJobData, outcome: Outcome): Promise<void>;
}

/** Every key an attempt counts under: its five layers, its stream and its circuit. */
function signalKeysOf(ctx: DeliveryContext, m: DispatchJobData): SignalKey[] {
  const { config, keys } = ctx;
  const on: SignalKey[] = layerKeysOf(keys, layerNamesOf(config, m)).map(({ kind, name }) => ({ kind, name }));
  on.push({ kind: 'stream', name: m.stream });
  on.push({
    kind: 'circuit',
    name: circuitId({ receiver: m.receiver, pool: poolOf(config, m.provider), stream: m.stream }),
  });
  return on;
}

/**
 * What a reply says about the key it came from: a throttle lowers that key's rate for
 * every process; a daily quota pauses the provider; failures without an answer in a row,
 * or an account that stopped sending, mark the provider down so routing fails over.
 */
export function createLearner(ctx: DeliveryContext): Learner {
  const { config, keys, adjustments, signals, logger, clock } = ctx;
  const matches = replyMatcher(config.governor.rules);
  /** Failures without an answer (or 5xx) in a row, per provider, in this process. */
  const failingInARow = new Map<string, number>();

  /** Counts an attempt's outcome for every key it belongs to (what the governor reads). */
  function count(m: DispatchJobData, outcome: Outcome): void {
    const on = signalKeysOf(ctx, m);
    signals.record(on, 'attempted');
    if (outcome.kind !== 'accepted') {
      const classified = outcome.kind === 'ambiguous' ? {} : { family: outcome.family, enhanced: outcome.enhanced };
      for (const rule of matches({ reply: outcome.reply, ...classified })) signals.record(on, `matched:${rule}`);
    }
    if (outcome.kind === 'rejected') signals.record(on, `rejected:${outcome.family}`);
    // A block-list listing of our IPs is about the pool at that receiver: its circuit counts it.
    if (outcome.kind !== 'accepted' && outcome.kind !== 'ambiguous' && outcome.scope === 'pool') {
      signals.record(
        on.filter((k) => k.kind === 'circuit'),
        'listed',
      );
    }
    if (outcome.kind === 'throttled' && (outcome.scope === 'recipient' || outcome.scope === 'connections')) {
      // One recipient receiving too fast, or too many connections at once: nobody's rate is
      // at fault, so no key is throttled (the receiver's connection slots are lowered below).
      signals.record(on, 'deferred:throttled');
    } else if (outcome.kind === 'throttled') {
      // A throttle counts against whoever refused: a receiver's 421 says nothing about the
      // provider (or pool) that carried it, and a provider's 429 nothing about the receiver.
      // For those keys it is a deferral by family (a receiver throttling a cold pool's IPs
      // is still what the pool's warm-up judges).
      const refusedBy = outcome.scope === 'provider' ? ['receiver'] : ['provider', 'pool'];
      signals.record(
        on.filter((k) => !refusedBy.includes(k.kind)),
        'throttled',
      );
      signals.record(
        on.filter((k) => refusedBy.includes(k.kind)),
        'deferred:throttled',
      );
    } else if (outcome.kind === 'accepted' || outcome.kind === 'rejected') signals.record(on, outcome.kind);
    else signals.record(on, `deferred:${outcome.kind === 'ambiguous' ? 'ambiguous' : outcome.family}`);
    // A recipient's first temporary failure (its job has no retry of any family yet): the
    // deferred recipients, each once, beside the deferred attempts.
    if (
      outcome.kind !== 'accepted' &&
      outcome.kind !== 'rejected' &&
      Object.keys(m.retry?.byFamily ?? {}).length === 0
    ) {
      signals.record(on, 'recipient_deferred');
    }
  }

  /**
   * A throttle: the provider paused when out of its quota, too many connections lowers the
   * receiver's connection slots, else the refusing key slowed down; one recipient's receiving
   * limit slows nobody, and holds that recipient's mail (`delivery.recipientHoldMs`).
   */
  async function throttled(m: DispatchJobData, outcome: Extract<Outcome, { kind: 'throttled' }>): Promise<void> {
    if (outcome.scope === 'recipient') {
      // Its other messages wait with it, at every process, without spending an attempt.
      const holdMs = Math.max(outcome.retryAfterMs ?? 0, config.delivery.recipientHoldMs);
      if (holdMs > 0 && !(await adjustments.holdRecipient(m.to, clock() + holdMs))) {
        logger.warn({ receiver: m.receiver }, 'recipient not held: too many recipients held at once');
      }
      return;
    }
    if (outcome.scope === 'connections') {
      const { cut, factor } = await adjustments.slowDown(keys.receiverConnections(m.receiver));
      if (cut) {
        const reply = outcome.reply.slice(0, 200);
        logger.info({ receiver: m.receiver, factor, reply }, 'too many connections: receiver connection slots lowered');
      }
      return;
    }
    if (outcome.family === 'quota_exhausted' && outcome.scope === 'provider') {
      // Until the next GetAccount reading says whether the rolling window has room again.
      const provider = config.providers[m.provider];
      const untilMs =
        clock() + Math.max(outcome.retryAfterMs ?? 0, provider?.kind === 'ses' ? provider.quotaRefreshMs : 60_000);
      await adjustments.pause(m.provider, untilMs, outcome.reply);
      logger.warn({ provider: m.provider, until: new Date(untilMs).toISOString() }, 'provider out of quota: paused');
      return;
    }
    const key =
      outcome.scope === 'provider' ? keys.bucket('provider', m.provider) : keys.bucket('receiver', m.receiver);
    // A key the governor has set is the governor's to pace.
    if (config.governor.enabled && adjustments.governed(key) !== undefined) return;
    const { cut, factor } = await adjustments.slowDown(key);
    if (cut) {
      const reply = outcome.reply.slice(0, 200);
      logger.info(
        { provider: m.provider, receiver: m.receiver, scope: outcome.scope, factor, reply },
        'throttled: rate lowered',
      );
    }
  }

  /**
   * A reply the classifier could not read, kept for `sluice replies unknown`: what an
   * operator needs to write its rule. Only these replies cost the write.
   */
  async function keepUnknown(m: DispatchJobData, outcome: Extract<Outcome, { kind: 'deferred' }>): Promise<void> {
    await ctx.store
      .keepUnknownReply({
        at: clock(),
        receiver: m.receiver,
        provider: m.provider,
        reply: outcome.reply,
        version: outcome.version,
      })
      .catch((err: unknown) => logger.warn({ err }, 'unknown reply not kept'));
  }

  return {
    async learn(m, outcome) {
      count(m, outcome);
      if (outcome.kind === 'accepted') {
        failingInARow.delete(m.provider);
        return;
      }
      if (outcome.kind === 'throttled') {
        await throttled(m, outcome);
        return;
      }
      // The provider itself failing: no answer at all, or an HTTP 5xx. (A receiver's 4xx
      // relayed by an SMTP smarthost says nothing about the smarthost.)
      const noAnswer = !outcome.answered;
      if (outcome.kind === 'deferred' && outcome.family === 'unknown') await keepUnknown(m, outcome);
      if (outcome.kind === 'deferred' && outcome.family === 'sender_config') {
        await adjustments.markDown(m.provider, config.failover.downForMs, outcome.reply);
        logger.error(
          { provider: m.provider, reply: outcome.reply.slice(0, 300) },
          'provider refuses the account: marked down',
        );
      } else if (noAnswer) {
        const n = (failingInARow.get(m.provider) ?? 0) + 1;
        failingInARow.set(m.provider, n);
        if (n >= config.failover.downAfter) {
          failingInARow.delete(m.provider);
          await adjustments.markDown(m.provider, config.failover.downForMs, `${n} failures in a row: ${outcome.reply}`);
          logger.error({ provider: m.provider, failures: n }, 'provider failing: marked down');
        }
      }
    },
  };
}
