import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { afterEach, beforeEach } from 'vitest';
import { parseConfig, parseMessage, type IntakeJobData, type Keys, type SluiceConfig } from '@sluice/core';
import { createAdmission, createOrganisations, createWarmup, type Admission, type Warmup } from '@sluice/dispatch';
import { createQueues, createStore, createSuppressions, type Queues, type Store } from '@sluice/store';
import type { RedisPrefix } from '../../../test/support/redis-prefix.js';
import {
  createAdjustments,
  createLimiter,
  createSignals,
  overrideField,
  type Adjustments,
  type Limiter,
  type OverrideState,
} from '@sluice/throttle';

/** What the admission tests share: one Redis prefix a test, its engine and the engine's collaborators, all closed after it. */
export interface Rig {
  redis: Redis;
  keys: Keys;
  config: SluiceConfig;
  store: Store;
  limiter: Limiter;
  adjustments: Adjustments;
  warmup: Warmup;
  queues: Queues;
  admission: Admission;
  /** A second engine on the same parts and clock (another scheduler), closed after the test. */
  another: () => Admission;
  /** The engine's and the adjustments' clock: moves only when stepped. */
  now: () => number;
  step: (ms: number) => void;
  /** A valid message to `to`, accepted now. */
  message: (over?: Partial<IntakeJobData>) => IntakeJobData;
  /** Sets an operator override as `@sluice/ops` writes it, and lets the adjustments read it. */
  override: (o: Omit<OverrideState, 'actor' | 'reason' | 'setAt'>) => Promise<void>;
  suppress: (tenantId: string, address: string) => Promise<void>;
  /** The record's state and held note. */
  record: (id: string) => Promise<{ state: string | undefined; heldBy: string | undefined }>;
}

export const DAY_MS = 3_600_000;
const HORIZON_MS = 100;

/**
 * Providers `main` and `spare` send from the active pool `warm`, `fresh` from the warming
 * pool `new` (2 sends per receiver a day). Receivers `gmail` (50/s), `midmail` (20/s, burst
 * 1) and `slowmail` (1/s, burst 1); campaigns 1/s by default; a 100 ms horizon, so a second message of a 1/s layer
 * is denied, not booked.
 */
export const baseConfig = {
  providers: {
    main: { kind: 'ses', sandbox: true, rate: 100, pool: 'warm' },
    spare: { kind: 'ses', sandbox: true, rate: 100, pool: 'warm' },
    fresh: { kind: 'ses', sandbox: true, rate: 100, pool: 'new' },
  },
  defaultProvider: 'main',
  pools: { warm: {}, new: { state: 'warming', warmup: { dayMs: DAY_MS, schedule: [{ '*': 2 }] } } },
  routes: {
    transactional: [{ provider: 'main', weight: 1 }],
    both: [
      { provider: 'main', weight: 1 },
      { provider: 'spare', weight: 0 },
    ],
    bulk: [
      { provider: 'fresh', weight: 1 },
      { provider: 'main', weight: 0 },
    ],
  },
  receivers: [
    { name: 'gmail', domains: ['gmail.com'], rate: 50, burst: 5 },
    { name: 'slowmail', domains: ['slow.example'], rate: 1, burst: 1 },
    { name: 'midmail', domains: ['mid.example'], rate: 20, burst: 1 },
  ],
  organisations: { builtIn: false },
  defaults: { campaign: { rate: 1, burst: 1 } },
  horizonsMs: { critical: HORIZON_MS, high: HORIZON_MS, normal: HORIZON_MS, low: HORIZON_MS },
};

/**
 * Registers the hooks that make a fresh {@link Rig} (its config {@link baseConfig} with `over`'s top-level keys in place) on the test's prefix (from `useRedisPrefix`,
 * called first in the file) before each test and close it after; the helper deletes the keys.
 */
export function useRig(test: RedisPrefix, over: Record<string, unknown> = {}): () => Rig {
  let rig: Rig | undefined;
  const open: (() => unknown)[] = [];
  beforeEach(async () => {
    const { redis, keys } = test;
    const config = parseConfig({ ...baseConfig, ...over, redis: { url: test.url, prefix: keys.prefix } });
    let t = Date.now();
    const clock = (): number => t;
    const store = createStore({ redis, keys });
    const limiter = createLimiter({ redis, reserves: config.reserves, jitterSlackMs: config.jitterSlackMs });
    const adjustments = createAdjustments({ redis, keys, backpressure: config.backpressure, clock });
    await adjustments.start();
    const signals = createSignals({ redis, keys, flushMs: 60_000, clock });
    const warmup = createWarmup({ config, redis, keys, adjustments, signals });
    await warmup.start();
    const organisations = createOrganisations({ config, logger: { warn: () => undefined } });
    const queues = createQueues({ redis, keys });
    // No jitter and the first route by weight: every wait is exact.
    const engine = (): Admission =>
      createAdmission({
        config,
        store,
        limiter,
        adjustments,
        warmup,
        organisations,
        queues,
        redis,
        keys,
        clock,
        random: () => 0,
      });
    const admission = engine();
    const suppressions = createSuppressions({ redis, keys });
    open.push(
      () => admission.close(),
      () => queues.close(),
      () => organisations.close(),
      () => signals.close(),
      () => adjustments.close(),
    );
    let n = 0;
    rig = {
      redis,
      keys,
      config,
      store,
      limiter,
      adjustments,
      warmup,
      queues,
      admission,
      another: () => {
        const other = engine();
        open.unshift(() => other.close());
        return other;
      },
      now: clock,
      step: (ms) => {
        t += ms;
      },
      message: (over = {}) => ({
        ...parseMessage({ from: 'Shop <shop@example.com>', to: 'ann@gmail.com', subject: 'Hi', text: 'Hello' }),
        id: `m-${++n}-${randomUUID().slice(0, 6)}`,
        acceptedAt: t,
        ...over,
      }),
      async override(o) {
        const state: OverrideState = { ...o, actor: 'ops@example.com', reason: 'incident', setAt: t };
        await redis.hset(keys.adjustments(), overrideField(keys.bucket(o.scope, o.name)), JSON.stringify(state));
        await adjustments.refresh();
      },
      async suppress(tenantId, address) {
        await suppressions.add(tenantId, address, {
          source: 'manual',
          at: t,
          provider: undefined,
          reason: 'asked to stop',
        });
      },
      async record(id) {
        const [state, heldBy] = await redis.hmget(keys.message(id), 'state', 'heldBy');
        return { state: state ?? undefined, heldBy: heldBy ?? undefined };
      },
    };
  });
  afterEach(async () => {
    for (const close of open.splice(0)) await close();
    rig = undefined;
  });
  return () => rig!;
}
