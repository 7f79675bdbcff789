import { pino } from 'pino';
import { afterEach } from 'vitest';
import { parseConfig, type DispatchJobData, type SluiceConfig } from '@sluice/core';
import {
  createDelivery,
  createLatency,
  SlotGate,
  type AttemptLabels,
  type Delivery,
  type DeliveryJob,
} from '@sluice/dispatch';
import { createProviders } from '@sluice/providers';
import { createSandbox, type Sandbox, type SandboxOptions } from '@sluice/sandbox';
import { createCampaignWork, createQueues, createStore, type Queues, type Store } from '@sluice/store';
import { createAdjustments, createLimiter, createSignals, type Adjustments, type Signals } from '@sluice/throttle';
import type { RedisPrefix } from '../../../test/support/redis-prefix.js';

// The worker's outcome table, in process: the delivery engine with real collaborators on
// real Redis, sending through the real SMTP adapter to the sandbox (whose scenario picks
// the reply: accept, 550 5.1.1, 421 4.7.28, 451 4.3.0, a connection lost after DATA).

/** One engine on the test's prefix with its collaborators, a sandbox behind its SMTP provider `relay`. */
export interface Setup {
  config: SluiceConfig;
  delivery: Delivery;
  store: Store;
  queues: Queues;
  signals: Signals;
  adjustments: Adjustments;
  sandbox: Sandbox;
  gate: SlotGate;
  /** The engine's clock: it stands still unless a test moves it. */
  now: number;
  /** The engine's log lines at warn and above, parsed (what an operator's log shows). */
  logs: Record<string, unknown>[];
  /** Called at each step of a delivery (the engine's `onStep`), when a test sets it. */
  onStep?: (step: string, id: string) => void;
  /** What the engine counted (its `metrics`): each answered attempt, each message delivered. */
  counted: { attempts: { labels: AttemptLabels; seconds: number }[]; delivered: [string, number][] };
}

/** What {@link useDelivery} gives a test file. */
export interface DeliveryRig {
  /** A fresh engine and sandbox (`scenario`), config overridden by `extra`; closed after the test. */
  setup(scenario?: SandboxOptions['scenario'], extra?: Record<string, unknown>): Promise<Setup>;
  /** An admitted message to `to` (as the scheduler leaves it: a record in `dispatched`). */
  admitted(s: Setup, to: string, extra?: Partial<DispatchJobData>): Promise<DispatchJobData>;
}

/**
 * Registers the hook that closes what each test's {@link DeliveryRig.setup} opened; call it
 * after `useRedisPrefix` (whose hooks delete the keys and check nothing was left open).
 */
export function useDelivery(test: RedisPrefix): DeliveryRig {
  const open: { close(): unknown }[] = [];
  afterEach(async () => {
    for (const o of open.splice(0).reverse()) await o.close();
  });
  let counter = 0;

  async function setup(scenario: SandboxOptions['scenario'] = {}, extra: Record<string, unknown> = {}): Promise<Setup> {
    const { redis, keys } = test;
    const sandbox = await createSandbox({ scenario });
    open.push(sandbox);
    const config = parseConfig({
      redis: { url: test.url, prefix: keys.prefix },
      defaultProvider: 'relay',
      providers: { relay: { kind: 'smtp', sandbox: true, rate: 1000, burst: 100, concurrency: 4 } },
      sandbox: { url: sandbox.url, smtpHost: '127.0.0.1', smtpPort: sandbox.smtpPort },
      ...extra,
    });
    const store = createStore({ redis, keys });
    const limiter = createLimiter({ redis, reserves: config.reserves, jitterSlackMs: config.jitterSlackMs });
    const adjustments = createAdjustments({ redis, keys, backpressure: config.backpressure });
    await adjustments.start();
    const signals = createSignals({ redis, keys, flushMs: 60_000 });
    const latency = createLatency({ redis, keys, flushMs: 60_000 });
    const queues = createQueues({ redis, keys });
    const providers = createProviders(config);
    open.push({ close: () => adjustments.close() }, signals, latency, queues, {
      close: () => Promise.all([...providers.values()].map((p) => p.close())),
    });
    const s: Setup = {
      config,
      store,
      queues,
      signals,
      adjustments,
      sandbox,
      gate: new SlotGate(1),
      now: Date.now(),
      logs: [],
      counted: { attempts: [], delivered: [] },
      delivery: undefined as never,
    };
    s.gate.resize(4);
    const logger = pino({ level: 'warn' }, { write: (line: string) => void s.logs.push(JSON.parse(line)) });
    s.delivery = createDelivery({
      config,
      store,
      limiter,
      adjustments,
      signals,
      latency,
      providers,
      queues,
      work: createCampaignWork({ redis, keys }),
      logger,
      clock: () => s.now,
      onStep: (step, id) => s.onStep?.(step, id),
      metrics: {
        attempt: (labels, seconds) => s.counted.attempts.push({ labels, seconds }),
        delivered: (priority, seconds) => s.counted.delivered.push([priority, seconds]),
      },
    });
    return s;
  }

  async function admitted(s: Setup, to: string, extra: Partial<DispatchJobData> = {}): Promise<DispatchJobData> {
    counter += 1;
    const m: DispatchJobData = {
      id: `m-${test.keys.prefix}-${counter}`,
      acceptedAt: s.now,
      from: { address: 'sender@sluice.test', name: 'Sluice Test' },
      to,
      subject: 'Hello',
      text: 'Hello there',
      priority: 'normal',
      stream: 'transactional',
      tenantId: 'acme',
      campaignId: 'spring',
      tags: {},
      headers: {},
      provider: 'relay',
      receiver: to.slice(to.indexOf('@') + 1),
      admittedAt: s.now,
      decidedAt: s.now,
      ...extra,
    };
    await s.store.accept(m);
    await s.store.markDispatched(m.id);
    return m;
  }

  return { setup, admitted };
}

/** A dispatch job of `m`; a delayed job (a booked second admission) is kept in `delayed`. */
export function jobOf(m: DispatchJobData, delayed: { data: DispatchJobData; untilMs: number }[] = []): DeliveryJob {
  return { data: m, delay: async (data, untilMs) => void delayed.push({ data, untilMs }) };
}

/** How many messages to `to` the sandbox accepted. */
export const sentTo = (s: Setup, to: string): number => s.sandbox.accepted().filter((r) => r.to.includes(to)).length;
