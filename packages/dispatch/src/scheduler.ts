import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import { DelayedError, Queue, RateLimitError, Worker, type Job } from 'bullmq';
import { Redis } from 'ioredis';
import type { Logger } from 'pino';
import {
  DISPATCH_JOB_OPTIONS,
  expiresAt,
  jobIdOf,
  recipientDomain,
  QUEUE_OPTIONS,
  PRIORITY_CLASSES,
  LAYER_KINDS,
  createKeys,
  type DispatchJobData,
  type IntakeJobData,
  type LayerKind,
  type PriorityClass,
  type SluiceConfig,
} from '@sluice/core';
import { createProviders, type Provider } from '@sluice/providers';
import { createStore } from '@sluice/store';
import { createAdjustments, createLimiter, createSignals, foldTotals, quotaLayers, sweepOverrides, type Layers, type OverrideState } from '@sluice/throttle';
import { createGovernor } from './governor.js';
import { createWarmup } from './warmup.js';
import { createOrganisations } from './organisations.js';
import { watchQuotas } from './quota.js';
import { route } from './routing.js';

/** Options of {@link createScheduler}. */
export interface SchedulerOptions {
  config: SluiceConfig;
  logger: Logger;
  /** How often the campaign list is read for new campaigns. @defaultValue `1000` */
  campaignPollMs?: number;
  /** A campaign's worker closes after its queue has been empty this long. @defaultValue `30_000` */
  campaignIdleMs?: number;
  /** Adapters whose account limits are read (SES `GetAccount`). @defaultValue one per configured SES provider */
  providers?: Map<string, Provider>;
}

/** A scheduler process's engine. Several may run at once. */
export interface Scheduler {
  start(): Promise<void>;
  /** Limiter calls made so far (the waste benchmark divides them by messages sent). */
  readonly limiterCalls: number;
  /** Stops taking jobs and waits for the ones in hand. */
  close(): Promise<void>;
}

/**
 * A message held by an override looks again at least this often, so an override cleared
 * before its end frees its mail within a minute rather than at the end it was set for.
 */
const OVERRIDE_RECHECK_MS = 60_000;

/** Why a message waits, noted on its record for `explain` (see `store.noteHeld`). */
type HeldNote = { by: string; key: string; untilMs: number; reason: string };

const bullWorkerOptions = (config: SluiceConfig) => ({
  concurrency: config.scheduler.concurrency,
  // Set so that queue.rateLimit() holds this queue for every scheduler (BullMQ needs limiter.max).
  limiter: { max: 1_000_000, duration: 1000 },
  lockDuration: config.worker.lockDurationMs,
  stalledInterval: config.worker.stalledIntervalMs,
  // A stalled job (its scheduler died) goes back to wait, however often: never to failed.
  maxStalledCount: 1_000_000,
});

/**
 * Moves messages from intake and campaign queues to dispatch queues in the check order
 * of DESIGN.md: record and suppression, expiry, class, quotas (one atomic call).
 */
export function createScheduler(options: SchedulerOptions): Scheduler {
  const { config, logger } = options;
  const keys = createKeys(config.redis.prefix);
  const redis = new Redis(config.redis.url, { maxRetriesPerRequest: null });
  const store = createStore({ redis, keys, recordTtlSeconds: config.delivery.recordTtlSeconds });
  const limiter = createLimiter({ redis, reserves: config.reserves, jitterSlackMs: config.jitterSlackMs });
  const adjustments = createAdjustments({ redis, keys, backpressure: config.backpressure });
  const organisations = createOrganisations({ config, logger });
  const signals = createSignals({ redis, keys });
  const warmup = createWarmup({ config, redis, keys, adjustments, signals });
  const campaignQueue = (id: string): Queue => {
    const name = keys.campaignQueue(id);
    let queue = campaignQueues.get(name);
    if (!queue) {
      queue = new Queue(name, { ...QUEUE_OPTIONS, connection: redis, prefix: keys.prefix });
      campaignQueues.set(name, queue);
    }
    return queue;
  };
  const governor = createGovernor({
    config,
    redis,
    keys,
    adjustments,
    signals,
    logger,
    holder: `${hostname()}-${process.pid}-${randomBytes(3).toString('hex')}`,
    // As an admin's pause: the flag stops admitted mail at the workers, the queue pause stops admission.
    async pauseCampaign(id) {
      await store.setCampaignPaused(id, true);
      await campaignQueue(id).pause();
    },
    async resumeCampaign(id) {
      // A campaign cancelled meanwhile stays as it is: cancelling cannot be undone.
      if ((await redis.hget(keys.campaign(id), 'cancelled')) === '1') return;
      await campaignQueue(id).resume();
      await store.setCampaignPaused(id, false);
    },
    async campaignClass(id) {
      return (await redis.hget(keys.campaign(id), 'priority')) ?? undefined;
    },
    warmup,
    chores: [
      // Overrides end by themselves for every reader; the leader tidies them, once.
      { name: 'override sweep', run: (now) => sweepOverrides(redis, keys, now) },
      { name: 'outcome totals', run: async (now) => foldTotals({ redis, keys, signals }, await signals.active('provider'), now) },
    ],
  });
  const quotaProviders =
    options.providers ?? createProviders({ ...config, providers: Object.fromEntries(Object.entries(config.providers).filter(([, p]) => p.kind === 'ses')) });
  let stopQuotas: (() => Promise<void>) | undefined;
  const dispatch = new Map<PriorityClass, Queue>(
    PRIORITY_CLASSES.map((p) => [p, new Queue(keys.dispatchQueue(p), { ...QUEUE_OPTIONS, connection: redis, prefix: keys.prefix, defaultJobOptions: { ...DISPATCH_JOB_OPTIONS } })]),
  );
  const workers = new Map<string, Worker>();
  const campaignQueues = new Map<string, Queue>();
  const intakeQueues = PRIORITY_CLASSES.map((p) => new Queue(keys.intakeQueue(p), { ...QUEUE_OPTIONS, connection: redis, prefix: keys.prefix }));
  const campaignIdleSince = new Map<string, number>();
  // A campaign queue held by a campaign-wide layer: jobs already fetched go back without
  // asking the limiter again until then.
  const heldUntil = new Map<string, number>();
  let poller: NodeJS.Timeout | undefined;
  let closing = false;

  const chains = new Map<string, Promise<unknown>>();
  /** Runs `fn` after every earlier call for the same key has finished. */
  function serialized<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const run = (chains.get(key) ?? Promise.resolve()).then(fn, fn);
    const tail = run.catch(() => undefined);
    chains.set(key, tail);
    void tail.then(() => {
      if (chains.get(key) === tail) chains.delete(key);
    });
    return run;
  }

  /**
   * Delays one message until `at`, noting why on its record in the same round trip (both go
   * out at once on one connection), so `explain` tells what holds it.
   */
  async function wait(job: Job<IntakeJobData>, token: string | undefined, at: number, note: HeldNote): Promise<never> {
    await Promise.all([store.noteHeld(job.data.id, note), job.moveToDelayed(at, token)]);
    throw new DelayedError();
  }

  /** Holds a whole campaign queue for `ms` (every scheduler), noting why on the message that found it held. */
  async function hold(queue: Queue, id: string, ms: number, note: HeldNote): Promise<never> {
    await Promise.all([store.noteHeld(id, note), queue.rateLimit(ms)]);
    throw new RateLimitError();
  }

  /** The first `pause` or `suspend` override in force on a message's layers: nothing is admitted through them. */
  function stoppedBy(layers: Layers): OverrideState | undefined {
    for (const layer of layers) {
      const o = adjustments.override(layer.key);
      if (o !== undefined && o.kind !== 'rate') return o;
    }
    return undefined;
  }

  async function admit(job: Job<IntakeJobData>, token: string | undefined, queue: Queue, isCampaign: boolean): Promise<void> {
    const m = job.data;
    const now = Date.now();

    // 1. Record and suppression. A final or already dispatched message is a duplicate job.
    const peek = await store.peek(m.id, m.tenantId, m.to);
    if (peek.state === null) await store.accept(m);
    else if (peek.state !== 'queued' && peek.state !== 'retrying') return;
    if (peek.suppressed !== null) {
      await store.finalize(m.id, 'suppressed', { campaignId: m.campaignId, reply: `suppressed: ${peek.suppressed}` });
      return;
    }

    // 2. Expiry: never sent late.
    const expiry = expiresAt(m, config.delivery.lifetimeMs);
    if (now >= expiry) {
      await store.finalize(m.id, 'expired', { campaignId: m.campaignId, reply: `expired before admission (expiresAt ${new Date(expiry).toISOString()})` });
      return;
    }

    // Routing: the stream's provider by weight, another while it is down, paused or
    // throttled hard. Every provider of the route paused: the message waits.
    const routeOptions = { poolState: (pool: string) => warmup.stateOf(pool) };
    let choice = route(config, adjustments, (p) => keys.bucket('provider', p), m.stream, routeOptions);
    if ('waitMs' in choice) {
      const note = { by: 'provider', key: m.stream, untilMs: now + choice.waitMs, reason: choice.reason };
      return isCampaign ? hold(queue, m.id, choice.waitMs, note) : wait(job, token, now + choice.waitMs, note);
    }

    // 3–5. Class (reserve and horizon) and the quotas in one atomic call, at the rates in
    // effect (lowered after throttles, capped by the provider's account).
    const campaign = m.campaignId !== undefined ? await store.campaignLimit(m.campaignId) : undefined;
    // The receiver is the domain's organisation by its MX hosts: from the cache without an
    // await; a miss waits for DNS, at most organisations.timeoutMs.
    const domain = recipientDomain(m.to);
    const receiverLimit = organisations.knownReceiverOf(domain) ?? (await organisations.receiverOf(domain));
    // Warm-up: a warming pool takes up to its cap of the day for this receiver. Beyond it
    // the message goes to an active pool of its route; with none it waits for the next day.
    // A failover onto a warming pool gets no more: a backlog never moves onto cold IPs.
    const poolOf = (provider: string): string => config.providers[provider]?.pool ?? 'default';
    let taken: string | undefined;
    if (warmup.stateOf(poolOf(choice.provider)) === 'warming') {
      const pool = poolOf(choice.provider);
      if (await warmup.take(pool, receiverLimit.name)) taken = pool;
      else {
        const other = route(config, adjustments, (p) => keys.bucket('provider', p), m.stream, {
          ...routeOptions,
          exclude: (p) => warmup.stateOf(poolOf(p)) === 'warming',
        });
        if ('waitMs' in other) {
          const at = Math.min(warmup.dayEndsAt(pool), now + other.waitMs) + Math.floor(Math.random() * 1000);
          return wait(job, token, at, { by: 'warmup', key: pool, untilMs: at, reason: `day's cap for ${receiverLimit.name} reached` });
        }
        choice = other;
      }
    }
    const release = async (): Promise<void> => {
      if (taken !== undefined) await warmup.giveBack(taken, receiverLimit.name);
    };
    // 4. The circuit of (receiver, pool, stream): open, nothing goes; half-open, a few
    // probes a period. Only this message waits: other receivers are not held.
    const circuit = `${receiverLimit.name}|${poolOf(choice.provider)}|${m.stream}`;
    const state = adjustments.circuit(circuit);
    if (state !== undefined) {
      let until = state.untilMs;
      if (now >= state.untilMs) {
        const period = Math.floor((now - state.untilMs) / state.openForMs);
        const probeKey = keys.circuitProbes(circuit, period);
        const [[, n]] = (await redis.multi().incr(probeKey).pexpire(probeKey, state.openForMs * 2).exec()) as [[unknown, number]];
        until = n <= state.probes ? 0 : state.untilMs + (period + 1) * state.openForMs;
      }
      if (until > now) {
        await release();
        const at = until + Math.floor(Math.random() * 1000);
        return wait(job, token, at, { by: 'circuit', key: circuit, untilMs: at, reason: `circuit open (${state.rule})` });
      }
    }
    const { layers, provider, receiver } = quotaLayers(
      config,
      keys,
      { to: m.to, tenantId: m.tenantId, campaign, provider: choice.provider, receiver: receiverLimit },
      adjustments,
    );
    // Operator overrides: a paused or suspended key admits nothing until it ends. A
    // campaign's own pause holds its whole queue; any other holds this message alone.
    const stop = stoppedBy(layers);
    if (stop !== undefined) {
      await release();
      const note = { by: 'override', key: `${stop.scope}:${stop.name}`, untilMs: stop.untilMs, reason: `${stop.kind} by ${stop.actor}: ${stop.reason}` };
      const at = Math.min(stop.untilMs, now + OVERRIDE_RECHECK_MS) + Math.floor(Math.random() * 1000);
      return isCampaign && stop.scope === 'campaign' ? hold(queue, m.id, at - now, note) : wait(job, token, at, note);
    }
    const request = {
      layers,
      priority: m.priority,
      // Failover takes only what its target has free now, never booking ahead of the
      // target's own traffic: the target is not flooded by another provider's backlog.
      horizonMs: choice.failover ? 0 : config.horizonsMs[m.priority],
      // A campaign-wide layer holds the whole campaign queue instead (below).
      waitlist: isCampaign ? (['receiver'] as const) : LAYER_KINDS,
      ticket: m.ticket,
    };
    // A campaign's decisions are taken one at a time in this process, so once one finds the
    // campaign held, the jobs fetched with it go back without asking the limiter again.
    const decision = isCampaign
      ? await serialized(queue.name, async () => {
          if ((heldUntil.get(queue.name) ?? 0) > Date.now()) return undefined;
          return limiter.admit(request);
        })
      : await limiter.admit(request);
    if (decision === undefined || decision.outcome === 'denied') await release();
    if (decision === undefined) throw new RateLimitError();

    // Granted now, or a slot booked on every layer within the horizon: either way the
    // message is admitted. A booked one waits in the dispatch queue until its slot, so it
    // never queues behind the intake backlog and never asks the limiter twice.
    if (decision.outcome !== 'denied') {
      const delay = decision.outcome === 'booked' ? decision.waitMs : 0;
      const { ticket: _used, ...message } = m;
      const data: DispatchJobData = { ...message, provider, receiver, admittedAt: now + delay, decidedAt: now, ...(choice.failover ? { failover: true } : {}) };
      // Job first, then record: a crash in between leaves the intake job to run again,
      // whose dispatch add is then ignored (same job id). Only from `queued`: a fast worker
      // may already have moved it on.
      // Both go out at once on one connection, so Redis runs them in this order.
      // Whatever held it no longer does.
      await Promise.all([
        dispatch.get(m.priority)!.add('send', data, { jobId: jobIdOf(m), delay }),
        store.transition(m.id, 'dispatched', { from: ['queued', 'retrying'] }),
        store.noteHeld(m.id, undefined),
      ]);
      return;
    }
    // Denied beyond the horizon. A campaign-wide layer holds the whole campaign queue
    // (in order, for every scheduler); a receiver holds only this message.
    // It holds until half the horizon is free again: slots booked for the other half keep
    // the sends going meanwhile, and the next pass books many messages per denial.
    const nameOf: Record<LayerKind, string> = { provider, receiver, pool: poolOf(provider), campaign: m.campaignId ?? '-', tenant: m.tenantId };
    if (isCampaign && decision.layer !== 'receiver') {
      const holdMs = decision.waitMs + Math.ceil(config.horizonsMs[m.priority] / 2);
      heldUntil.set(queue.name, Date.now() + holdMs);
      return hold(queue, m.id, holdMs, { by: decision.layer, key: nameOf[decision.layer], untilMs: now + holdMs, reason: 'campaign queue held: quota busy' });
    }
    // The wait is this message's turn in the receiver's line (or half of it, to see a rate
    // rise early); the ticket goes with the job so it keeps its place. Data first: a crash
    // in between runs the job again with its place.
    if (decision.ticket && (decision.ticket.number !== m.ticket?.number || decision.ticket.key !== m.ticket.key)) {
      await job.updateData({ ...m, ticket: decision.ticket });
    }
    return wait(job, token, now + decision.waitMs, { by: decision.layer, key: nameOf[decision.layer], untilMs: now + decision.waitMs, reason: 'quota busy: waits its turn' });
  }

  function watch(queue: Queue, isCampaign: boolean): void {
    const worker = new Worker<IntakeJobData>(queue.name, (job, token) => admit(job, token, queue, isCampaign), {
      connection: redis,
      prefix: keys.prefix,
      ...bullWorkerOptions(config),
    });
    worker.on('error', (err) => logger.error({ err, queue: queue.name }, 'scheduler worker error'));
    worker.on('failed', (job, err) => logger.warn({ err, id: job?.id, queue: queue.name }, 'intake job failed; BullMQ retries it'));
    workers.set(queue.name, worker);
  }

  async function pollCampaigns(): Promise<void> {
    const ids = await redis.smembers(keys.campaigns());
    for (const id of ids) {
      const name = keys.campaignQueue(id);
      let queue = campaignQueues.get(name);
      if (!queue) {
        queue = new Queue(name, { ...QUEUE_OPTIONS, connection: redis, prefix: keys.prefix });
        campaignQueues.set(name, queue);
      }
      const counts = await queue.getJobCounts('waiting', 'delayed', 'active', 'prioritized');
      const busy = Object.values(counts).some((n) => n > 0);
      const worker = workers.get(name);
      if (busy) {
        campaignIdleSince.delete(name);
        if (!worker && !closing) {
          watch(queue, true);
          logger.info({ campaign: id }, 'watching campaign');
        }
      } else if (worker) {
        const since = campaignIdleSince.get(name) ?? Date.now();
        campaignIdleSince.set(name, since);
        if (Date.now() - since > (options.campaignIdleMs ?? 30_000)) {
          workers.delete(name);
          campaignIdleSince.delete(name);
          await worker.close();
          logger.info({ campaign: id }, 'campaign idle; worker closed');
        }
      }
    }
  }

  return {
    get limiterCalls() {
      return limiter.calls;
    },
    async start() {
      await adjustments.start();
      await warmup.start();
      governor.start();
      stopQuotas = watchQuotas({ config, providers: quotaProviders, adjustments, logger });
      for (const q of intakeQueues) watch(q, false);
      const loop = (): void => {
        poller = setTimeout(() => {
          pollCampaigns()
            .catch((err: unknown) => logger.error({ err }, 'campaign poll failed'))
            .finally(() => {
              if (!closing) loop();
            });
        }, options.campaignPollMs ?? 1000);
      };
      await pollCampaigns();
      loop();
    },
    async close() {
      closing = true;
      if (poller) clearTimeout(poller);
      await Promise.all([...workers.values()].map((w) => w.close()));
      await stopQuotas?.();
      await governor.close();
      await signals.close();
      adjustments.close();
      organisations.close();
      for (const p of quotaProviders.values()) await p.close();
      await Promise.all([...dispatch.values(), ...campaignQueues.values(), ...intakeQueues].map((q) => q.close()));
      await redis.quit();
    },
  };
}
