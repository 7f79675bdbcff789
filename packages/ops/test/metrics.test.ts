import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Queue } from 'bullmq';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { QUEUE_OPTIONS, parseConfig, type SluiceConfig } from '@sluice/core';
import {
  FLEET_METRIC_NAMES,
  createMetricsHandler,
  createOverrides,
  fleetMetrics,
  registerFleetMetrics,
  type FleetMetric,
  type MetricsRegistry,
  type StatusSnapshot,
} from '@sluice/ops';
import { fromSources, startProcess } from '../../../test/support/process.js';
import { useRedisPrefix } from '../../../test/support/redis-prefix.js';
import { freePort } from '../../../test/support/redis-server.js';

const r = useRedisPrefix();

/**
 * prom-client's registry as far as the collectors use it (this package has no prom-client:
 * `apps/api/test/metrics.test.ts` renders through the real one).
 */
function fakeRegistry(): MetricsRegistry & { json(): Promise<FleetMetric[]> } {
  const metrics: { get(): Promise<FleetMetric> }[] = [];
  const json = (): Promise<FleetMetric[]> => Promise.all(metrics.map((m) => m.get()));
  return {
    contentType: 'text/plain; version=0.0.4; charset=utf-8',
    registerMetric(metric: never) {
      metrics.push(metric);
    },
    json,
    async metrics() {
      return (await json()).map((m) => `${m.name} ${m.values.length}`).join('\n');
    },
  };
}

const value = (families: FleetMetric[], name: string, labels: Record<string, string> = {}): number | undefined =>
  families.find((f) => f.name === name)?.values.find((v) => Object.entries(labels).every(([k, l]) => v.labels[k] === l))
    ?.value;

const SNAPSHOT: StatusSnapshot = {
  at: 1_000_000,
  fleet: {
    processes: [],
    alive: { scheduler: 1, worker: 2, api: 0, admin: 0 },
    schemas: [1],
    sandbox: ['ses'],
    blocks: true,
    unscheduled: null,
  },
  keys: [
    { scope: 'provider', name: 'ses', configuredRate: 50, effectiveRate: 25, factor: 0.5, sendRate: 24.2, tokens: 3 },
    { scope: 'receiver', name: 'gmail.com', factor: 1, sendRate: 4 },
  ],
  queues: [
    {
      queue: 'dispatch-critical-{b32.76}',
      kind: 'dispatch',
      priority: 'critical',
      waiting: 2,
      delayed: 5,
      active: 1,
      oldestAgeMs: 1500,
    },
    {
      queue: '{campaign-spring}',
      kind: 'campaign',
      campaignId: 'spring',
      waiting: 900,
      delayed: 0,
      active: 0,
      oldestAgeMs: 0,
    },
  ],
  latency: { critical: { p50: 35, p95: 124, samples: 46 } },
  outcomes: {
    recipients: 100,
    attempts: 130,
    accepted: 97,
    deferred: 30,
    deferredRecipients: 21,
    rejected: 3,
    retries: 30,
    attemptsPerRecipient: 1.3,
  },
  alerts: [],
  admissible: [
    { pool: 'default', work: 40 },
    { pool: 'warm', work: 0 },
  ],
  circuits: [
    { name: 'google|default|marketing', state: 'open', untilMs: 1_300_000 },
    { name: 'yahoo|default|marketing', state: 'half-open', untilMs: 900_000 },
  ],
  overrides: [
    {
      scope: 'campaign',
      name: 'spring',
      kind: 'pause',
      untilMs: 1_060_000,
      actor: 'ops',
      reason: 'complaints',
      setAt: 990_000,
    },
  ],
  campaigns: [{ id: 'spring', state: 'paused', counts: { accepted: 1000, sent: 100, pending: 900 } }],
};

describe('fleet metrics from a status snapshot', () => {
  it('maps every figure to its metric and labels', () => {
    const m = fleetMetrics(SNAPSHOT);
    expect(m.map((f) => f.name)).toEqual(FLEET_METRIC_NAMES);
    for (const f of m) {
      expect(f.name).toMatch(/^sluice_[a-z_]+$/);
      expect(f.help.length).toBeGreaterThan(10);
    }
    expect(value(m, 'sluice_status_up')).toBe(1);
    expect(value(m, 'sluice_recipients_attempted_total')).toBe(100);
    expect(value(m, 'sluice_recipients_accepted_total')).toBe(97);
    expect(value(m, 'sluice_recipients_rejected_total')).toBe(3);
    expect(value(m, 'sluice_attempts_deferred_total')).toBe(30);
    expect(value(m, 'sluice_recipients_deferred_total')).toBe(21);
    expect(value(m, 'sluice_attempts_per_recipient')).toBe(1.3);
    const ses = { scope: 'provider', name: 'ses' };
    expect(value(m, 'sluice_key_configured_rate', ses)).toBe(50);
    expect(value(m, 'sluice_key_effective_rate', ses)).toBe(25);
    expect(value(m, 'sluice_key_tokens', ses)).toBe(3);
    // A key without a limit of its own has a factor and nothing else (its send rate is
    // the workers' sluice_sends_total, in PromQL).
    const gmail = { scope: 'receiver', name: 'gmail.com' };
    expect(value(m, 'sluice_key_factor', gmail)).toBe(1);
    expect(value(m, 'sluice_key_effective_rate', gmail)).toBeUndefined();
    expect(value(m, 'sluice_key_tokens', gmail)).toBeUndefined();
    const critical = { queue: 'dispatch-critical-{b32.76}', kind: 'dispatch', priority: 'critical' };
    expect(value(m, 'sluice_queue_waiting', critical)).toBe(2);
    expect(value(m, 'sluice_queue_delayed', critical)).toBe(5);
    expect(value(m, 'sluice_queue_active', critical)).toBe(1);
    expect(value(m, 'sluice_queue_oldest_age_seconds', critical)).toBe(1.5);
    expect(value(m, 'sluice_queue_waiting', { queue: '{campaign-spring}', kind: 'campaign', priority: '' })).toBe(900);
    // Latency is the workers' histogram (sluice_delivery_latency_seconds), not a fleet gauge.
    expect(m.some((f) => f.name.startsWith('sluice_latency'))).toBe(false);
    expect(value(m, 'sluice_circuit_state', { name: 'google|default|marketing' })).toBe(1);
    // Every pool, idle ones at 0: the series a worker autoscaler sums never vanishes.
    expect(value(m, 'sluice_admissible_work', { pool: 'default' })).toBe(40);
    expect(value(m, 'sluice_admissible_work', { pool: 'warm' })).toBe(0);
    expect(value(m, 'sluice_circuit_state', { name: 'yahoo|default|marketing' })).toBe(0.5);
    expect(value(m, 'sluice_override_expiry_seconds', { scope: 'campaign', name: 'spring', kind: 'pause' })).toBe(60);
    expect(value(m, 'sluice_campaign_messages', { campaign: 'spring', count: 'pending' })).toBe(900);
  });

  it('reads one snapshot per scrape, and reports a failed one as sluice_status_up 0', async () => {
    const registry = fakeRegistry();
    let reads = 0;
    let fail = false;
    let now = 0;
    const errors: unknown[] = [];
    registerFleetMetrics(registry, {
      snapshot: async () => {
        reads++;
        if (fail) throw new Error('redis is gone');
        return SNAPSHOT;
      },
      onError: (err) => errors.push(err),
      maxAgeMs: 1_000,
      clock: () => now,
    });
    const first = await registry.json();
    expect(reads).toBe(1);
    expect(value(first, 'sluice_key_effective_rate', { scope: 'provider', name: 'ses' })).toBe(25);

    // Within the snapshot's age a scrape reads no other; past it, the next one does.
    now = 1_000;
    await registry.json();
    expect(reads).toBe(1);
    fail = true;
    now = 1_001;
    const failed = await registry.json();
    expect(reads).toBe(2);
    expect(value(failed, 'sluice_status_up')).toBe(0);
    expect(failed.filter((f) => f.name !== 'sluice_status_up').every((f) => f.values.length === 0)).toBe(true);
    expect(errors).toHaveLength(1);
  });

  it('serves the figures only while this process leads, and says whether it does', async () => {
    const registry = fakeRegistry();
    let reads = 0;
    let leads = false;
    registerFleetMetrics(registry, {
      snapshot: async () => {
        reads++;
        return SNAPSHOT;
      },
      leading: () => leads,
    });
    const follower = await registry.json();
    expect(reads).toBe(0);
    expect(value(follower, 'sluice_leader')).toBe(0);
    expect(follower.filter((f) => f.name !== 'sluice_leader').every((f) => f.values.length === 0)).toBe(true);
    leads = true;
    const leader = await registry.json();
    expect(reads).toBe(1);
    expect(value(leader, 'sluice_leader')).toBe(1);
    expect(value(leader, 'sluice_status_up')).toBe(1);
    expect(value(leader, 'sluice_queue_waiting', { queue: '{campaign-spring}', kind: 'campaign', priority: '' })).toBe(
      900,
    );
  });
});

describe('fleet metrics from Redis', () => {
  let config: SluiceConfig;
  let queue: Queue;

  beforeEach(async () => {
    const { redis, keys, prefix } = r;
    config = parseConfig({
      redis: { url: r.url, prefix },
      providers: { ses: { kind: 'ses', sandbox: true, rate: 40 } },
      receivers: [{ name: 'google', domains: ['gmail.com'], rate: 20 }],
    });
    queue = new Queue(keys.dispatchQueue('low'), { ...QUEUE_OPTIONS, connection: redis, prefix });
    await queue.add('send', { id: 'm1' });
    await queue.add('send', { id: 'm2' }, { delay: 60_000 });
    await createOverrides({ config, redis, keys }).set({
      scope: 'receiver',
      name: 'google',
      kind: 'rate',
      rate: 5,
      forMs: 120_000,
      actor: 'ops',
      reason: 'test',
    });
  });

  afterEach(async () => {
    await queue.close();
  });

  it('shows the configured keys, the queues and the overrides of a real fleet', async () => {
    const { redis, keys } = r;
    const registry = fakeRegistry();
    const handler = createMetricsHandler({ registry, config, redis, keys });
    try {
      const m = await registry.json();
      expect(value(m, 'sluice_status_up')).toBe(1);
      expect(value(m, 'sluice_key_configured_rate', { scope: 'provider', name: 'ses' })).toBe(40);
      expect(value(m, 'sluice_key_configured_rate', { scope: 'receiver', name: 'google' })).toBe(20);
      expect(value(m, 'sluice_key_effective_rate', { scope: 'receiver', name: 'google' })).toBe(5);
      const low = { queue: 'dispatch-low-{b32.76}', kind: 'dispatch', priority: 'low' };
      expect(value(m, 'sluice_queue_waiting', low)).toBe(1);
      expect(value(m, 'sluice_queue_delayed', low)).toBe(1);
      expect(value(m, 'sluice_queue_oldest_age_seconds', low)).toBeGreaterThanOrEqual(0);
      const expiry = value(m, 'sluice_override_expiry_seconds', { scope: 'receiver', name: 'google', kind: 'rate' });
      expect(expiry).toBeGreaterThan(100);
      expect(expiry).toBeLessThanOrEqual(120);
      expect(value(m, 'sluice_recipients_attempted_total')).toBe(0);
    } finally {
      await handler.close();
    }
    // The caller's connection is still the caller's.
    expect(await redis.ping()).toBe('PONG');
  });
});

// A process test (the wiring of apps/worker/src/main.ts), from its sources.
describe('a worker started with SLUICE_METRICS_PORT', () => {
  it('serves /metrics on that port while it runs, and closes it on SIGTERM', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sluice-metrics-'));
    const configPath = join(dir, 'sluice.yaml');
    writeFileSync(
      configPath,
      JSON.stringify({ redis: { prefix: r.prefix }, providers: { ses: { kind: 'ses', sandbox: true, rate: 50 } } }),
    );
    const port = await freePort();
    const env = { ...process.env, SLUICE_CONFIG: configPath, REDIS_URL: r.url, SLUICE_METRICS_PORT: String(port) };
    const worker = await startProcess('worker', fromSources('worker'), env, '"event":"ready"');
    try {
      expect(worker.output()).toContain(`"url":"http://127.0.0.1:${port}/metrics"`);
      const res = await fetch(`http://127.0.0.1:${port}/metrics`);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
      const text = await res.text();
      // Its own figures: its counters (none yet), its Redis connection, its process.
      expect(text).toContain('# TYPE sluice_sends_total counter');
      expect(text).toContain('# TYPE sluice_delivery_latency_seconds histogram');
      expect(text).toContain('sluice_redis_up 1');
      // The fleet's are the leading scheduler's alone.
      expect(text).not.toContain('sluice_queue_waiting');
      expect(text).toMatch(/^process_resident_memory_bytes \d/m);
      expect((await fetch(`http://127.0.0.1:${port}/other`)).status).toBe(404);
    } finally {
      expect(await worker.stop()).toBe(0);
      rmSync(dir, { recursive: true, force: true });
    }
    await expect(fetch(`http://127.0.0.1:${port}/metrics`)).rejects.toThrow();
  });
});
