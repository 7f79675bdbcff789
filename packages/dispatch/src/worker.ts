import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import { DelayedError, Worker, type Job } from 'bullmq';
import type { Logger } from 'pino';
import { PRIORITY_CLASSES, createKeys, type DispatchJobData, type SluiceConfig } from '@sluice/core';
import { createProviders, type Provider } from '@sluice/providers';
import {
  connectRedis,
  createCampaignWork,
  createCampaigns,
  createQueues,
  createHeartbeat,
  createRedisHealth,
  createStore,
  type RedisHealth,
} from '@sluice/store';
import { createAdjustments, createLimiter, createSignals, createSlots, type Slots } from '@sluice/throttle';
import { createDelivery } from './delivery/engine.js';
import type { DeliveryMetrics } from './delivery/metrics.js';
import type { OnStep } from './delivery/steps.js';
import { SlotGate } from './delivery/gate.js';
import { createLatency } from './delivery/latency.js';

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
  const redis = connectRedis(config.redis.url, { maxRetriesPerRequest: null, health });
  const store = createStore({ redis, keys, recordTtlSeconds: config.delivery.recordTtlSeconds });
  const limiter = createLimiter({
    redis,
    reserves: config.reserves,
    lendAheadMs: config.reserves.lendAheadMs,
    jitterSlackMs: config.jitterSlackMs,
  });
  const adjustments = createAdjustments({ redis, keys, backpressure: config.backpressure });
  // Written four times a second: the governor's reaction time starts here.
  const signals = createSignals({ redis, keys, flushMs: 250 });
  const latency = createLatency({ redis, keys });
  const queues = createQueues({ redis, keys });
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
  const workers = new Map<string, Worker>();
  for (const [id, p] of Object.entries(config.providers)) {
    const gate = new SlotGate(config.worker.concurrency.critical);
    gates.set(id, gate);
    const onChange = (n: number): void => {
      gate.resize(n);
      rescale();
    };
    // Short leases: a share freed by a stopped worker, or owed to a new one, moves within a second.
    const slotKeys = { key: keys.slots(id), holdersKey: keys.slotHolders(id) };
    slots.set(id, createSlots({ redis, ...slotKeys, limit: p.concurrency, holder, want, leaseMs: 3_000, onChange }));
  }

  /**
   * Fetch no more than the slots held can send: non-critical concurrency follows this
   * process's share of the slots, and with none held it stops fetching, so jobs wait in
   * the queue for a process that can send them rather than sit here.
   */
  function rescale(): void {
    const held = [...slots.values()].reduce((n, s) => n + s.held, 0);
    for (const p of PRIORITY_CLASSES) {
      const worker = workers.get(p);
      if (!worker) continue;
      const configured = config.worker.concurrency[p];
      // Critical keeps its full concurrency: the gate reserves permits for it.
      if (p !== 'critical') {
        worker.concurrency = Math.max(1, Math.min(configured, Math.ceil((held * configured) / want)));
      }
      if (held === 0 && !worker.isPaused()) void worker.pause(true);
      else if (held > 0 && worker.isPaused()) void worker.resume();
    }
  }

  async function handle(job: Job<DispatchJobData>, token: string | undefined): Promise<void> {
    const gate = gates.get(job.data.provider);
    if (!gate) throw new Error(`no provider ${job.data.provider} configured in this worker`);
    const delay = async (data: DispatchJobData, untilMs: number): Promise<void> => {
      await job.updateData(data);
      await job.moveToDelayed(untilMs, token);
    };
    // Booked for a later slot: the job is delayed already; BullMQ must not complete it.
    if ((await delivery.deliver({ data: job.data, delay }, gate)) === 'delayed') throw new DelayedError();
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
        const worker = new Worker<DispatchJobData>(keys.dispatchQueue(p), handle, {
          connection: redis,
          prefix: keys.prefix,
          concurrency: config.worker.concurrency[p],
          lockDuration: config.worker.lockDurationMs,
          stalledInterval: config.worker.stalledIntervalMs,
          maxStalledCount: 1_000_000,
        });
        // Connection errors (every retry of its two connections) are the health reporter's.
        health.watch(worker, (err) => logger.error({ err, queue: worker.name }, 'worker error'));
        worker.on('failed', (job, err) => logger.warn({ err, id: job?.id }, 'dispatch job failed; BullMQ retries it'));
        workers.set(p, worker);
      }
      rescale();
    },
    async close() {
      await heartbeat.close();
      if (ownHealth) health.close();
      const drain = Promise.all([...workers.values()].map((w) => w.close()));
      const timeout = new Promise<'timeout'>((r) =>
        setTimeout(() => r('timeout'), config.worker.drainTimeoutMs).unref(),
      );
      if ((await Promise.race([drain, timeout])) === 'timeout') {
        logger.warn('drain timed out; in-flight jobs go back to the queue');
        await Promise.all([...workers.values()].map((w) => w.close(true)));
      }
      for (const s of slots.values()) await s.close();
      adjustments.close();
      await signals.close();
      await latency.close();
      for (const p of providers.values()) await p.close();
      await queues.close();
      await redis.quit();
    },
  };
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
