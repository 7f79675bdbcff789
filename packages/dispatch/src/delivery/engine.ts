import type { Logger } from 'pino';
import {
  createKeys,
  type DispatchJobData,
  organisationNamed,
  systemClock,
  type Clock,
  type SluiceConfig,
} from '@sluice/core';
import type { Outcome, Provider } from '@sluice/providers';
import type { CampaignWork, Campaigns, Queues, Store } from '@sluice/store';
import type { Adjustments, Limiter, Signals } from '@sluice/throttle';
import type { Latency } from './latency.js';
import type { DeliveryContext, DeliveryGate, DeliveryResult } from './context.js';
import { createLearner } from './learn.js';
import { takePlace } from './arrival.js';
import { CONNECTION_WAIT_MS, createReceiverConnections } from './connections.js';
import { delayFor, precheck, putOff, standsAside, type DeliveryJob } from './precheck.js';
import { readmit } from './readmit.js';
import { send, type Sent } from './send.js';
import { settle } from './settle.js';
import { createRenderer, rendered } from './render.js';
import { NO_DELIVERY_METRICS, receiverLabeller, type DeliveryMetrics } from './metrics.js';
import type { OnStep } from './steps.js';
import { createBatchDelivery, type DeliveryBatchJob } from './batch.js';

/** Options of {@link createDelivery}: its collaborators, each the caller's to close. */
export interface DeliveryOptions {
  config: SluiceConfig;
  store: Store;
  limiter: Limiter;
  adjustments: Adjustments;
  /** Where attempts' outcomes are counted (what the governor reads). */
  signals: Signals;
  /** Where the latency of sent mail is sampled. */
  latency: Latency;
  /**
   * Where this process counts its attempts, their ESP time and the latency of what it sent
   * (in memory: the worker's `/metrics`). @defaultValue none: nothing counted
   */
  metrics?: DeliveryMetrics | undefined;
  /** Adapters by provider id. */
  providers: ReadonlyMap<string, Provider>;
  /** Where a message goes back to admission (its intake or campaign queue). */
  queues: Queues;
  /** The campaigns with work (`createCampaignWork`): a message back in its campaign's queue marks it. */
  work: Pick<CampaignWork, 'mark'>;
  logger: Logger;
  /** @defaultValue `Date.now` */
  clock?: Clock;
  /** A test hook called at each step of a delivery (fault tests crash a worker there). @defaultValue none */
  onStep?: OnStep;
  /**
   * Where injected campaign recipients' content is read, to render them at send time (the
   * campaign lifecycle). @defaultValue none: an injected recipient cannot be sent and ends `rejected`
   */
  campaigns?: Pick<Campaigns, 'content'>;
}

export type { DeliveryGate, DeliveryResult } from './context.js';

/** The worker's engine: one dispatch job in, at most one send, exactly one next state out. */
export interface Delivery {
  /**
   * Delivers one dispatch job through its stages: precheck (provider standing, the record
   * read, re-admission at a lowered rate, suspension, expiry), send (the arrival gate and
   * the `submit` mark before the final bytes: the mark counts the attempt), learn (the
   * signals and what the outcome says about its keys) and settle (the outcome table).
   * The connection permit is held from the precheck to the end of the send, and a slot of the
   * receiver's connections from after the precheck.
   */
  deliver(job: DeliveryJob, gate: DeliveryGate): Promise<DeliveryResult>;
  /**
   * Delivers a batch job (docs/design/batches.md): each recipient through the same checks, the
   * sendable ones in one call per group the adapter carries together, placed and marked
   * together before the final bytes, each settled on its own outcome. A recipient that waits
   * leaves the batch as a dispatch job of its own; a batch put off at the arrival gate waits
   * in its queue as one.
   */
  deliverBatch(job: DeliveryBatchJob, gate: DeliveryGate): Promise<DeliveryResult>;
}

/** Creates the delivery engine. It holds nothing to close but its collaborators, which are the caller's. */
export function createDelivery(options: DeliveryOptions): Delivery {
  const { config, providers } = options;
  const ctx: DeliveryContext = {
    config,
    keys: createKeys(config.redis.prefix),
    store: options.store,
    limiter: options.limiter,
    adjustments: options.adjustments,
    signals: options.signals,
    latency: options.latency,
    metrics: options.metrics ?? NO_DELIVERY_METRICS,
    queues: options.queues,
    work: options.work,
    logger: options.logger,
    clock: options.clock ?? systemClock,
  };
  const learner = createLearner(ctx);
  const connections = createReceiverConnections(ctx);
  const { onStep } = options;
  const renderer = createRenderer(options.campaigns ?? { content: () => Promise.resolve(null) });
  const receiverLabel = receiverLabeller(config);

  /**
   * The mark refused the request before its final bytes: a final message is done, a paused
   * campaign's goes back to admission, and one another run submitted meanwhile is looked at
   * again in a second, when that run has answered or is known to have died.
   */
  async function refused(
    job: DeliveryJob,
    result: Extract<Sent, { kind: 'refused' }>['result'],
  ): Promise<DeliveryResult> {
    if (result === 'held') await readmit(ctx, job.data, 'held: campaign paused');
    if (result !== 'skipped') return 'done';
    await job.delay(job.data, ctx.clock() + 1_000);
    return 'delayed';
  }

  /** One attempt counted for this process's metrics. */
  function counted(m: DispatchJobData, outcome: Outcome, seconds: number): void {
    const labels = {
      provider: m.provider,
      pool: config.providers[m.provider]?.pool ?? 'default',
      receiver: receiverLabel(m),
      outcome: outcome.kind,
    };
    ctx.metrics.attempt(labels, seconds);
  }
  const batches = createBatchDelivery({ ctx, providers, learner, renderer, connections, counted, onStep });

  return {
    deliverBatch: (job, gate) => batches.deliverBatch(job, gate),
    async deliver(job, gate) {
      const m = job.data;
      onStep?.('taken', m.id);
      const provider = providers.get(m.provider);
      if (!provider) throw new Error(`no provider ${m.provider} configured in this worker`);
      if (await standsAside(ctx, m)) return 'done';
      const message = await rendered(ctx, renderer, m);
      if (message === undefined) return 'done';

      const release = await gate.acquire(m.priority);
      let connection: (() => void) | undefined;
      let sent: Sent;
      try {
        const ready = await precheck(ctx, job);
        if (ready.kind !== 'send') return ready.kind;
        // Every connection slot of its receiver is in use here: it looks again shortly, and
        // the provider permit goes to mail for other receivers meanwhile.
        connection = connections.take(m);
        if (connection === undefined) return (await delayFor(ctx, job, CONNECTION_WAIT_MS)).kind;
        onStep?.('sending', m.id);
        const organisation = organisationNamed(config, m.receiver);
        sent = await send(ctx.store, provider, message, organisation, () => takePlace(ctx, m, onStep), onStep);
        if (sent.kind === 'put-off') return (await putOff(ctx, job, sent.room, ready.first)).kind;
      } finally {
        connection?.();
        release();
      }
      if (sent.kind === 'refused') return refused(job, sent.result);
      const { outcome, attempt } = sent;
      counted(m, outcome, sent.seconds);

      onStep?.('answered', m.id);
      await learner.learn(m, outcome);
      await settle(ctx, m, outcome, attempt);
      onStep?.('settled', m.id);
      return 'done';
    },
  };
}
