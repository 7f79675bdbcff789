import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import { DelayedError, Worker, type Job } from 'bullmq';
import type { Logger } from 'pino';
import {
  BATCH_JOB,
  PRIORITY_CLASSES,
  createKeys,
  type DispatchBatchData,
  type DispatchJobData,
  type PriorityClass,
  type SluiceConfig,
} from '@sluice/core';
import { createProviders, type Provider } from '@sluice/providers';
import {
  connectRoles,
  createCampaignWork,
  createCampaigns,
  createQueues,
  createHeartbeat,
  createRedisHealth,
  createStore,
  type RedisHealth,
} from '@sluice/store';
import { createAdjustments, createSignals, createSlots, type Slots } from '@sluice/throttle';
import { fleetLimiter } from './control/shared-limiter.js';
import { createDelivery } from './delivery/engine.js';
import type { DeliveryMetrics } from './delivery/metrics.js';
import type { OnStep } from './delivery/steps.js';
import { SlotGate } from './delivery/gate.js';
import { createLatency } from './delivery/latency.js';
import { createWorkerWatchdog, type WorkerWatchdog } from './watchdog.js';

/** Options of {@link createWorker}. */
export interface WorkerOptions {
  config: SluiceConfig;
  logger: Logger;
  /** Adapters by provider id. @defaultValue one per configured provider */
  providers?: Map<string, Provider>;
  /** The process's Redis health reporter. @defaultValue one of its own, on `logger` */
  health?: RedisHealth;
  /** Where deliveries are counted (the delivery's `metrics`: the worker's `/metrics`). @defaultValue none */
  metrics?: DeliveryMetrics | undefined;
  /** A test hook called at each step of every delivery (the delivery's `onStep`). @defaultValue none */
  onStep?: OnStep;
}

/** A worker process's engine: stateless, scaled horizontally. */
export interface SluiceWorker {
  start(): Promise<void>;
  /** Stops fetching, lets in-flight sends finish (up to `worker.drainTimeoutMs`), gives slots back. */
  close(): Promise<void>;
}

/**
 * Consumes the dispatch queues: takes a connection slot, sends, and turns the outcome
 * into exactly one final state or a delayed retry (the stages are in `delivery/`; this
 * is their BullMQ wiring).
 */
export function createWorker(options: WorkerOptions): SluiceWorker {
  const { config, logger } = options;
  const keys = createKeys(config.redis.prefix);
  const ownHealth = options.health === undefined;
  const health = options.health ?? createRedisHealth({ url: config.redis.url, logger });
  const connections = connectRoles(config, { maxRetriesPerRequest: null, health });
  // The queues' Redis and the limiter's (`control`): one unless `redis.limiter` names another.
  const { queues: redis, limiter: control } = connections;
  const store = createStore({ redis, keys, recordTtlSeconds: config.delivery.recordTtlSeconds });
  const limiter = fleetLimiter(control, config, logger);
  const adjustments = createAdjustments({ redis: control, keys, backpressure: config.backpressure });
  // Written four times a second: the governor's reaction time starts here.
  const signals = createSignals({ redis: control, keys, flushMs: 250 });
  const latency = createLatency({ redis: control, keys });
  const queues = createQueues({ redis, keys, partitions: config.redis.dispatchPartitions });
  const providers = options.providers ?? createProviders(config);
  const delivery = createDelivery({
    config,
    store,
    limiter,
    adjustments,
    signals,
    latency,
    metrics: options.metrics,
    providers,
    queues,
    work: createCampaignWork({ redis, keys }),
    logger,
    // Injected campaign recipients are rendered from their campaign's content.
    campaigns: createCampaigns({ redis, keys, queues, store }),
    ...(options.onStep ? { onStep: options.onStep } : {}),
  });
  const holder = `${hostname()}-${process.pid}-${randomBytes(3).toString('hex')}`;
  const heartbeat = createHeartbeat({
    redis,
    keys,
    role: 'worker',
    sandbox: [...providers.values()].filter((p) => p.sandbox).map((p) => p.id),
  });
  const want = PRIORITY_CLASSES.reduce((n, p) => n + config.worker.concurrency[p], 0);
  const gates = new Map<string, SlotGate>();
  const slots = new Map<string, Slots>();
  // Per class, one BullMQ Worker per dispatch partition (`redis.dispatchPartitions`).
  const workers = new Map<PriorityClass, Worker[]>();
  const partitions = config.redis.dispatchPartitions;
  const watchdog = dispatchWatchdog(config, logger, workers, () => rescale());
  for (const [id, p] of Object.entries(config.providers)) {
    const gate = new SlotGate(config.worker.concurrency.critical);
    gates.set(id, gate);
    const onChange = (n: number): void => {
      gate.resize(n);
      rescale();
    };
    // Short leases: a share freed by a stopped worker, or owed to a new one, moves within a second.
    const slotKeys = { key: keys.slots(id), holdersKey: keys.slotHolders(id) };
    slots.set(
      id,
      createSlots({ redis: control, ...slotKeys, limit: p.concurrency, holder, want, leaseMs: 3_000, onChange }),
    );
  }

  /**
   * Fetch no more than the slots held can send: non-critical concurrency follows this
   * process's share of the slots, and with none held it stops fetching, so jobs wait in
   * the queue for a process that can send them rather than sit here.
   */
  function rescale(): void {
    const held = [...slots.values()].reduce((n, s) => n + s.held, 0);
    for (const p of PRIORITY_CLASSES) {
      const configured = config.worker.concurrency[p];
      // Critical keeps its full concurrency: the gate reserves permits for it.
      const total = p === 'critical' ? configured : Math.min(configured, Math.ceil((held * configured) / want));
      for (const worker of workers.get(p) ?? []) {
        // The class's concurrency shared by its partitions (admission spreads them evenly).
        worker.concurrency = Math.max(1, Math.ceil(total / partitions));
        if (held === 0 && !worker.isPaused()) void worker.pause(true);
        else if (held > 0 && worker.isPaused()) void worker.resume();
      }
    }
  }

  async function handle(job: Job<DispatchJobData | DispatchBatchData>, token: string | undefined): Promise<void> {
    const delay = async (data: DispatchJobData | DispatchBatchData, untilMs: number): Promise<void> => {
      await job.updateData(data);
      await job.moveToDelayed(untilMs, token);
    };
    const batch = job.name === BATCH_JOB ? (job.data as DispatchBatchData) : undefined;
    const provider = batch ? batch.batch[0]?.provider : (job.data as DispatchJobData).provider;
    const gate = provider === undefined ? undefined : gates.get(provider);
    if (batch?.batch.length === 0) return;
    if (!gate) throw new Error(`no provider ${provider} configured in this worker`);
    const result = batch
      ? await delivery.deliverBatch({ id: job.id ?? '', data: batch, delay }, gate)
      : await delivery.deliver({ data: job.data as DispatchJobData, delay }, gate);
    // Booked for a later slot: the job is delayed already; BullMQ must not complete it.
    if (result === 'delayed') throw new DelayedError();
  }

  /** One class's BullMQ Worker on one of its dispatch queues (the watchdog makes it again if it wedges). */
  function dispatchWorker(name: string, p: PriorityClass): Worker<DispatchJobData | DispatchBatchData> {
    const worker = new Worker<DispatchJobData | DispatchBatchData>(name, handle, {
      connection: redis,
      prefix: keys.prefix,
      concurrency: Math.max(1, Math.ceil(config.worker.concurrency[p] / partitions)),
      lockDuration: config.worker.lockDurationMs,
      stalledInterval: config.worker.stalledIntervalMs,
      maxStalledCount: 1_000_000,
    });
    // Connection errors (every retry of its two connections) are the health reporter's.
    health.watch(worker, (err) => logger.error({ err, queue: worker.name }, 'worker error'));
    worker.on('failed', (job, err) => logger.warn({ err, id: job?.id }, 'dispatch job failed; BullMQ retries it'));
    return worker;
  }

  return {
    async start() {
      // A real provider without credentials refuses the start (naming it) before any job is fetched.
      for (const p of providers.values()) await p.ready();
      for (const p of providers.values()) {
        const result = await p.check();
        if (result.ok) logger.info({ provider: p.id, sandbox: p.sandbox }, result.detail);
        else logger.warn({ provider: p.id }, `provider check failed: ${result.error}`);
      }
      announceSandbox(logger, [...providers.values()]);
      await heartbeat.start();
      await adjustments.start();
      for (const s of slots.values()) await s.start();
      for (const p of PRIORITY_CLASSES) {
        // Its partitions, and any queue a former `redis.dispatchPartitions` left (drained here).
        const inUse = await queues.dispatchInUse(p);
        const list = [...new Set([...queues.dispatchAll(p), ...inUse])].map((queue) =>
          watchdog.watch(() => dispatchWorker(queue.name, p)),
        );
        workers.set(p, list);
      }
      rescale();
    },
    async close() {
      // First: no Worker is made again while they close.
      await watchdog.close();
      await heartbeat.close();
      if (ownHealth) health.close();
      const all = [...workers.values()].flat();
      const drain = Promise.all(all.map((w) => w.close()));
      const timeout = new Promise<'timeout'>((r) =>
        setTimeout(() => r('timeout'), config.worker.drainTimeoutMs).unref(),
      );
      if ((await Promise.race([drain, timeout])) === 'timeout') {
        logger.warn('drain timed out; in-flight jobs go back to the queue');
        await Promise.all(all.map((w) => w.close(true)));
      }
      for (const s of slots.values()) await s.close();
      adjustments.close();
      await signals.close();
      await latency.close();
      for (const p of providers.values()) await p.close();
      await queues.close();
      await connections.quit();
    },
  };
}

/**
 * Makes again a dispatch Worker whose blocking connection stays wedged (a failover on a
 * cluster): the new one takes the old one's place in `workers`, and `rescale` gives it its share.
 */
function dispatchWatchdog(
  config: SluiceConfig,
  logger: Logger,
  workers: Map<PriorityClass, Worker[]>,
  rescale: () => void,
): WorkerWatchdog {
  return createWorkerWatchdog({
    logger,
    notReadyMs: config.worker.watchdog.notReadyMs,
    onReplace(next, old) {
      for (const list of workers.values()) {
        const at = list.indexOf(old);
        if (at >= 0) list[at] = next;
      }
      rescale();
    },
  });
}

/** One warning at start when any provider sends to the local sandbox: its mail never leaves. */
function announceSandbox(logger: Logger, providers: readonly Provider[]): void {
  const sandbox = providers.filter((p) => p.sandbox).map((p) => p.id);
  if (sandbox.length === 0) return;
  logger.warn(
    { event: 'sandbox', providers: sandbox },
    `sending to the local sandbox, not a real ESP: ${sandbox.join(', ')} (this mail never leaves)`,
  );
}
