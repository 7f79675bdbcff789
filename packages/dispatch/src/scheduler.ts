import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import { DelayedError, RateLimitError, Worker, type Job, type Queue } from 'bullmq';
import type { Logger } from 'pino';
import {
  BLOCK_JOB,
  PRIORITY_CLASSES,
  createKeys,
  type CampaignBlockData,
  type IntakeJobData,
  type Keys,
  type SluiceConfig,
} from '@sluice/core';
import { createProviders, type Provider } from '@sluice/providers';
import {
  connectRoles,
  type RoleConnections,
  createCampaignArchiver,
  createCampaigns,
  createFillingBatches,
  createQueues,
  createRedisHealth,
  createHeartbeat,
  createInjectionWindows,
  createPlans,
  createStore,
  takeUnscheduled,
  type RedisHealth,
} from '@sluice/store';
import { createAdjustments, createSignals } from '@sluice/throttle';
import { fleetLimiter } from './control/shared-limiter.js';
import { schedulerGovernor } from './leader.js';
import { createWarmup } from './control/warmup.js';
import { createOrganisations } from './routing/organisations.js';
import { watchQuotas } from './control/quota.js';
import { createAdmission } from './admission/engine.js';
import { admitBlock } from './admission/block.js';
import { createBatcher, type Batcher } from './admission/batcher.js';
import { createLaunchChore } from './launch/chore.js';
import { createCampaignPoll, type CampaignPoll } from './campaign-poll.js';
import { createWorkerWatchdog, type WorkerWatchdog } from './watchdog.js';

/** Options of {@link createScheduler}. */
export interface SchedulerOptions {
  config: SluiceConfig;
  logger: Logger;
  /** How often the campaigns with work are read (`keys.campaignsWithWork()`). @defaultValue `1000` */
  campaignPollMs?: number;
  /** A campaign's worker closes after its queue has been empty this long. @defaultValue `30_000` */
  campaignIdleMs?: number;
  /** Adapters whose account limits are read (SES `GetAccount`). @defaultValue one per configured SES provider */
  providers?: Map<string, Provider>;
  /** The process's Redis health reporter. @defaultValue one of its own, on `logger` */
  health?: RedisHealth;
}

/** A scheduler process's engine. Several may run at once. */
export interface Scheduler {
  start(): Promise<void>;
  /**
   * Whether this scheduler leads (holds the governor's lease, as of its last tick): the
   * leader alone serves the fleet-wide gauges on its `/metrics`.
   */
  readonly leading: boolean;
  /** Limiter calls made so far (the waste benchmark divides them by messages sent). */
  readonly limiterCalls: number;
  /** One campaign poll now, besides the timer's (the campaigns-idle benchmark counts its commands). */
  poll(): Promise<void>;
  /** Stops taking jobs and waits for the ones in hand. */
  close(): Promise<void>;
}

/** How often a scheduler looks for batches left in Redis past their due time (at most half `worker.lockDurationMs`). */
const SWEEP_MS = 5_000;

const bullWorkerOptions = (config: SluiceConfig, isCampaign: boolean) => ({
  // A campaign's admissions wait for their batch to fill: enough of them at once to fill one.
  concurrency:
    isCampaign && config.batches.enabled
      ? Math.max(config.scheduler.concurrency, config.batches.maxSize)
      : config.scheduler.concurrency,
  // Set so that queue.rateLimit() holds this queue for every scheduler (BullMQ needs limiter.max).
  limiter: { max: 1_000_000, duration: 1000 },
  lockDuration: config.worker.lockDurationMs,
  stalledInterval: config.worker.stalledIntervalMs,
  // A stalled job (its scheduler died) goes back to wait, however often: never to failed.
  maxStalledCount: 1_000_000,
});

/**
 * Makes again a scheduler Worker whose blocking connection stays wedged (a failover on a
 * cluster), in its holder's place: an intake Worker in `workers`, a campaign Worker in the
 * campaign poll's list (`replaced`), which closes it by reference when the campaign goes idle.
 */
function schedulerWatchdog(
  config: SluiceConfig,
  logger: Logger,
  workers: Map<string, Worker>,
  campaigns: () => CampaignPoll,
): WorkerWatchdog {
  return createWorkerWatchdog({
    logger,
    notReadyMs: config.worker.watchdog.notReadyMs,
    onReplace: (next, old) => {
      if (workers.get(old.name) === old) workers.set(next.name, next);
      else campaigns().replaced(next, old);
    },
  });
}

/** The engines' collaborators, each on its role's Redis: the queues' (`queues`) or the limiter's. */
function schedulerParts(config: SluiceConfig, logger: Logger, keys: Keys, connections: RoleConnections) {
  const { queues: redis, limiter: control } = connections;
  // This scheduler's name: its leases and its batches in Redis carry it.
  const holder = `${hostname()}-${process.pid}-${randomBytes(3).toString('hex')}`;
  const store = createStore({ redis, keys, recordTtlSeconds: config.delivery.recordTtlSeconds });
  const adjustments = createAdjustments({ redis: control, keys, backpressure: config.backpressure });
  const signals = createSignals({ redis: control, keys });
  const warmup = createWarmup({ config, redis: control, keys, adjustments, signals });
  // Every queue handle of this process (intake, campaign, dispatch), on its one connection:
  // a dispatch add and the record's writes then go out in order.
  const queues = createQueues({ redis, keys, partitions: config.redis.dispatchPartitions });
  return {
    holder,
    store,
    limiter: fleetLimiter(control, config, logger),
    adjustments,
    organisations: createOrganisations({ config, logger }),
    signals,
    warmup,
    queues,
    campaigns: createCampaigns({ redis, keys, queues, store }),
    batcher: createBatcher({ config, queues, filling: createFillingBatches(redis, keys), holder }),
  };
}

/** One adapter per configured SES provider, whose account limits are read (`GetAccount`). */
function sesProviders(config: SluiceConfig): Map<string, Provider> {
  return createProviders({
    ...config,
    providers: Object.fromEntries(Object.entries(config.providers).filter(([, p]) => p.kind === 'ses')),
  });
}

/**
 * Moves messages from intake and campaign queues to dispatch queues in the check order
 * of docs/design/flow.md: record and suppression, expiry, route and warm-up, circuit, overrides,
 * class and quotas (one atomic call). The checks are {@link createAdmission}'s; this is
 * the BullMQ side: a worker per queue, and what a result does to the job or its queue.
 */
export function createScheduler(options: SchedulerOptions): Scheduler {
  const { config, logger } = options;
  const keys = createKeys(config.redis.prefix);
  const ownHealth = options.health === undefined;
  const health = options.health ?? createRedisHealth({ url: config.redis.url, logger });
  const connections = connectRoles(config, { maxRetriesPerRequest: null, health });
  // The queues' Redis and the limiter's (`control`): one unless `redis.limiter` names another.
  const { queues: redis, limiter: control } = connections;
  const { holder, store, limiter, adjustments, organisations, signals, warmup, queues, campaigns, batcher } =
    schedulerParts(config, logger, keys, connections);
  const windows = createInjectionWindows({ redis, keys, config });
  const admission = createAdmission({
    batcher,
    config,
    store,
    limiter,
    adjustments,
    warmup,
    organisations,
    queues,
    redis: control, // its circuits' probe counters are the limiter's
    keys,
    // Tenants' records are on the queues' Redis; the cap counters are the limiter's.
    plans:
      Object.keys(config.plans).length > 0 ? createPlans({ redis, limiterRedis: control, keys, config }) : undefined,
  });
  const heartbeat = schedulerHeartbeat(config, redis, keys);
  const launch = createLaunchChore({ config, redis, keys, adjustments, organisations, warmup, logger, holder });
  const archiver = createCampaignArchiver({ redis, keys, settings: config.campaigns, logger });
  const governor = schedulerGovernor({
    config,
    redis,
    control,
    keys,
    adjustments,
    signals,
    logger,
    campaigns,
    warmup,
    holder,
    launch,
    archiver,
  });
  const quotaProviders = options.providers ?? sesProviders(config);
  let stopQuotas: (() => Promise<void>) | undefined;
  // Made now, as they always were: a new handle writes its queue's meta before the first admission.
  for (const p of PRIORITY_CLASSES) queues.dispatchAll(p);
  const workers = new Map<string, Worker>();
  const intakeQueues = PRIORITY_CLASSES.map((p) => queues.intake(p));
  let poller: NodeJS.Timeout | undefined;
  let sweeper: NodeJS.Timeout | undefined;
  let closing = false;
  const watchdog = schedulerWatchdog(config, logger, workers, () => campaignPoll);

  /**
   * Admits one intake or campaign job, then acts on the job as the engine says: a message
   * that waits is delayed in its queue, a held campaign holds its whole queue.
   */
  async function admit(
    job: Job<IntakeJobData>,
    token: string | undefined,
    queue: Queue,
    isCampaign: boolean,
  ): Promise<void> {
    const result = await admission.admit(job.data, isCampaign ? { campaignQueue: queue.name } : {});
    switch (result.kind) {
      case 'wait':
        // The ticket goes with the job so it keeps its place. Data first: a crash in between
        // runs the job again with its place.
        if (result.ticket) await job.updateData({ ...job.data, ticket: result.ticket });
        // Delays the message, noting why on its record in the same round trip (both go out
        // at once on one connection), so `explain` tells what holds it.
        await Promise.all([store.noteHeld(job.data.id, result.note), job.moveToDelayed(result.at, token)]);
        throw new DelayedError();
      case 'hold':
        // Holds the whole campaign queue (every scheduler), noting why on the message that found it held.
        await Promise.all([store.noteHeld(job.data.id, result.note), queue.rateLimit(result.ms)]);
        throw new RateLimitError();
      case 'held':
        throw new RateLimitError();
      default:
        return;
    }
  }

  function watch(queue: Queue, isCampaign: boolean): Worker {
    const handle = (job: Job, token: string | undefined): Promise<void> =>
      job.name === BLOCK_JOB
        ? admitBlock({ admission, store }, job as Job<CampaignBlockData>, queue)
        : admit(job as Job<IntakeJobData>, token, queue, isCampaign);
    const worker = new Worker(queue.name, handle, {
      connection: redis,
      prefix: keys.prefix,
      ...bullWorkerOptions(config, isCampaign),
    });
    // Connection errors (every retry of its two connections) are the health reporter's.
    health.watch(worker, (err) => logger.error({ err, queue: queue.name }, 'scheduler worker error'));
    worker.on('failed', (job, err) =>
      logger.warn({ err, id: job?.id, queue: queue.name }, 'intake job failed; BullMQ retries it'),
    );
    return worker;
  }

  const campaignPoll = createCampaignPoll({
    redis,
    keys,
    queues,
    windows,
    logger,
    idleMs: options.campaignIdleMs ?? 30_000,
    watch: (queue) => (closing ? undefined : watchdog.watch(() => watch(queue, true))),
  });
  const pollCampaigns = (): Promise<void> => campaignPoll.poll();

  return {
    get limiterCalls() {
      return limiter.calls;
    },
    poll: () => pollCampaigns(),
    get leading() {
      return governor.leading;
    },
    async start() {
      // A real SES provider without credentials refuses the start, as in the workers.
      for (const p of quotaProviders.values()) await p.ready();
      await heartbeat.start();
      const waited = await takeUnscheduled(redis, keys);
      if (waited) {
        logger.warn(
          { event: 'unscheduled', count: waited.count, firstAt: waited.firstAt, lastAt: waited.lastAt },
          `${waited.count} messages were accepted while no scheduler ran (since ${new Date(waited.firstAt).toISOString()}): admitting them now`,
        );
      }
      await adjustments.start();
      await warmup.start();
      governor.start();
      stopQuotas = watchQuotas({ config, providers: quotaProviders, adjustments, logger, onReading: launch.noteQuota });
      for (const q of intakeQueues)
        workers.set(
          q.name,
          watchdog.watch(() => watch(q, false)),
        );
      const loop = (): void => {
        poller = setTimeout(() => {
          pollCampaigns()
            .catch((err: unknown) => {
              if (!health.explains(err)) logger.error({ err }, 'campaign poll failed');
            })
            .finally(() => {
              if (!closing) loop();
            });
        }, options.campaignPollMs ?? 1000);
      };
      await pollCampaigns();
      loop();
      sweeper = sweepBatches(config, batcher, health, logger);
    },
    async close() {
      closing = true;
      await watchdog.close();
      await heartbeat.close();
      if (ownHealth) health.close();
      if (poller) clearTimeout(poller);
      clearInterval(sweeper);
      // The admissions in hand wait for their batches: written as they are, so the workers close.
      const closed = Promise.all([...workers.values(), ...campaignPoll.workers()].map((w) => w.close()));
      await batcher.flush().then(() => closed);
      await stopQuotas?.();
      await governor.close();
      await archiver.close();
      await signals.close();
      adjustments.close();
      organisations.close();
      for (const p of quotaProviders.values()) await p.close();
      await admission.close();
      await queues.close();
      await connections.quit();
    },
  };
}

/** Sweeps now and every few seconds for batches a scheduler was filling when it died: written by whoever finds them first. */
function sweepBatches(config: SluiceConfig, batcher: Batcher, health: RedisHealth, logger: Logger): NodeJS.Timeout {
  const sweep = (): void =>
    void batcher.sweep().catch((err: unknown) => {
      if (!health.explains(err)) logger.error({ err }, 'batch sweep failed');
    });
  sweep();
  return setInterval(sweep, Math.min(SWEEP_MS, config.worker.lockDurationMs / 2));
}

/** A scheduler's heartbeat: its sandbox providers, and whether it takes campaign jobs of many recipients. */
function schedulerHeartbeat(config: SluiceConfig, redis: Parameters<typeof createHeartbeat>[0]['redis'], keys: Keys) {
  return createHeartbeat({
    redis,
    keys,
    role: 'scheduler',
    sandbox: sandboxProviders(config),
    blocks: config.batches.enabled,
  });
}

/** The configured providers that send to the local sandbox (for the heartbeat and the status). */
export function sandboxProviders(config: SluiceConfig): string[] {
  return Object.entries(config.providers)
    .filter(([, p]) => p.sandbox)
    .map(([id]) => id);
}
