import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Redis } from 'ioredis';
import { createKeys, systemClock, type Clock, type Keys, type SluiceConfig } from '@sluice/core';
import { connectRoles, type RedisHealth, type RoleConnections } from '@sluice/store';
import { createStatus, type Status } from './status.js';
import type { StatusSnapshot } from './types.js';

/** One metric family as Prometheus shows it. */
export interface FleetMetric {
  name: string;
  help: string;
  type: 'gauge' | 'counter';
  values: { labels: Record<string, string>; value: number }[];
}

/**
 * The registry the metrics go into: prom-client's `Registry` fits. Collectors are
 * registered through prom-client's metric protocol (`name`, `help`, `type`, `aggregator`,
 * `get()`), so this package needs no prom-client of its own; prom-client types
 * `registerMetric` over its own classes only, hence `never`.
 */
export interface MetricsRegistry {
  registerMetric(metric: never): void;
  metrics(): Promise<string>;
  readonly contentType: string;
}

/** Options of {@link registerFleetMetrics}. */
export interface FleetMetricsOptions {
  /** The fleet's status, read once per scrape (see `createStatus`). */
  snapshot: () => Promise<StatusSnapshot>;
  /** Told when a snapshot fails; the scrape then reports `sluice_status_up 0` and no fleet figures. */
  onError?: ((err: unknown) => void) | undefined;
  /** A scrape reuses a snapshot this young (the collectors of one scrape share one). @defaultValue `1000` */
  maxAgeMs?: number | undefined;
  /** What a snapshot's age is measured by (tests step it). @defaultValue `Date.now` */
  clock?: Clock | undefined;
  /**
   * Whether this process is the one that serves the fleet's figures (a scheduler: whether it
   * leads). Given, `sluice_leader` says it, and a process that does not lead reads nothing
   * and reports no fleet figure, so a sum over processes counts each figure once.
   * @defaultValue none: this process always serves them, and there is no `sluice_leader`
   */
  leading?: (() => boolean) | undefined;
}

const META: Record<string, { help: string; type: FleetMetric['type'] }> = {
  sluice_status_up: {
    help: 'Whether the fleet status could be read from Redis for this scrape (1) or not (0).',
    type: 'gauge',
  },
  sluice_recipients_attempted_total: {
    help: 'Recipients with a final answer from a provider (accepted or rejected), since the counters began.',
    type: 'counter',
  },
  sluice_recipients_accepted_total: {
    help: 'Recipients accepted by a provider, since the counters began.',
    type: 'counter',
  },
  sluice_recipients_rejected_total: {
    help: 'Recipients rejected permanently by a provider, since the counters began.',
    type: 'counter',
  },
  sluice_recipients_deferred_total: {
    help: 'Recipients deferred at least once (each counted at its first temporary failure), since the counters began.',
    type: 'counter',
  },
  sluice_attempts_total: { help: 'Send attempts, since the counters began.', type: 'counter' },
  sluice_attempts_deferred_total: {
    help: 'Attempts deferred (throttled or temporarily failed, so retried), since the counters began.',
    type: 'counter',
  },
  sluice_attempts_per_recipient: {
    help: 'Attempts per recipient with a final answer (1 = every recipient took one attempt).',
    type: 'gauge',
  },
  sluice_key_configured_rate: { help: 'Configured rate of a quota key, messages per second.', type: 'gauge' },
  sluice_key_effective_rate: {
    help: 'Rate of a quota key in force (governor, backpressure, account cap and overrides applied), messages per second.',
    type: 'gauge',
  },
  sluice_key_tokens: { help: 'Sends a quota key could admit at once right now (its shared slice).', type: 'gauge' },
  sluice_key_factor: { help: 'Share of the configured rate in force (1 = full).', type: 'gauge' },
  sluice_key_unknown_share: {
    help: 'Share of a receiver’s recent attempts whose reply the classifier could not read (family unknown).',
    type: 'gauge',
  },
  sluice_queue_waiting: { help: 'Jobs waiting in a queue.', type: 'gauge' },
  sluice_queue_delayed: { help: 'Jobs delayed in a queue (booked slots, retries).', type: 'gauge' },
  sluice_queue_active: { help: 'Jobs being processed from a queue.', type: 'gauge' },
  sluice_queue_bytes: {
    help: "Memory of a queue's jobs, estimated from a sample of up to 13 jobs, bytes.",
    type: 'gauge',
  },
  sluice_queue_oldest_age_seconds: {
    help: 'Age of the oldest job of a queue not yet done, seconds (0 when empty).',
    type: 'gauge',
  },
  sluice_admissible_work: {
    help: 'Dispatch jobs (a message or a batch: one ESP call each) workers could take now or within their class horizon (waiting, active, or due by then), by IP pool: what workers scale on.',
    type: 'gauge',
  },
  sluice_circuit_state: {
    help: 'Circuit breakers not closed: 1 open, 0.5 half-open (closed circuits are absent).',
    type: 'gauge',
  },
  sluice_override_expiry_seconds: { help: 'Overrides in force: seconds until each expires.', type: 'gauge' },
  sluice_campaign_messages: {
    help: 'Messages of a campaign by count (accepted, sent, rejected, suppressed, expired, cancelled, unconfirmed, pending).',
    type: 'gauge',
  },
  sluice_fleet_processes: {
    help: 'Processes whose heartbeat is live under the prefix, by role, release and store schema.',
    type: 'gauge',
  },
  sluice_fleet_sandbox_providers: {
    help: 'Providers some live process sends to the local sandbox with (mail that never leaves): 1 each.',
    type: 'gauge',
  },
  sluice_unscheduled_messages: {
    help: 'Messages accepted while no scheduler ran, not yet taken by a starting scheduler.',
    type: 'gauge',
  },
};

/** The heartbeat's figures: live processes per role and release, sandbox providers, mail waiting for a scheduler. */
function fleetFigures(
  fleet: StatusSnapshot['fleet'],
  put: (name: string, labels: Record<string, string>, value: number) => void,
): void {
  const byRelease = new Map<string, { labels: Record<string, string>; n: number }>();
  for (const p of fleet.processes) {
    const key = `${p.role}|${p.version}|${p.schema}`;
    const entry = byRelease.get(key) ?? {
      labels: { role: p.role, version: p.version, schema: String(p.schema) },
      n: 0,
    };
    entry.n += 1;
    byRelease.set(key, entry);
  }
  for (const { labels, n } of byRelease.values()) put('sluice_fleet_processes', labels, n);
  for (const provider of fleet.sandbox) put('sluice_fleet_sandbox_providers', { provider }, 1);
  put('sluice_unscheduled_messages', {}, fleet.unscheduled?.count ?? 0);
}

/** Every metric name {@link registerFleetMetrics} registers. */
export const FLEET_METRIC_NAMES = Object.keys(META);

/**
 * The fleet's status as metric families (a pure function: the formatting layer of
 * {@link registerFleetMetrics}). Without a snapshot (Redis could not be read) only
 * `sluice_status_up 0` has a value.
 */
export function fleetMetrics(snapshot: StatusSnapshot | undefined): FleetMetric[] {
  const values = new Map<string, FleetMetric['values']>(FLEET_METRIC_NAMES.map((n) => [n, []]));
  const put = (name: string, labels: Record<string, string>, value: number | undefined): void => {
    if (value !== undefined && Number.isFinite(value)) values.get(name)!.push({ labels, value });
  };
  put('sluice_status_up', {}, snapshot ? 1 : 0);
  if (snapshot) {
    const o = snapshot.outcomes;
    put('sluice_recipients_attempted_total', {}, o.recipients);
    put('sluice_recipients_accepted_total', {}, o.accepted);
    put('sluice_recipients_rejected_total', {}, o.rejected);
    put('sluice_recipients_deferred_total', {}, o.deferredRecipients);
    put('sluice_attempts_total', {}, o.attempts);
    put('sluice_attempts_deferred_total', {}, o.deferred);
    put('sluice_attempts_per_recipient', {}, o.attemptsPerRecipient);
    for (const k of snapshot.keys) {
      const labels = { scope: k.scope, name: k.name };
      put('sluice_key_configured_rate', labels, k.configuredRate);
      put('sluice_key_effective_rate', labels, k.effectiveRate);
      put('sluice_key_tokens', labels, k.tokens);
      put('sluice_key_factor', labels, k.factor);
      put('sluice_key_unknown_share', labels, k.unknownShare);
    }
    for (const q of snapshot.queues) {
      const labels = { queue: q.queue, kind: q.kind, priority: q.priority ?? '' };
      put('sluice_queue_waiting', labels, q.waiting);
      put('sluice_queue_delayed', labels, q.delayed);
      put('sluice_queue_active', labels, q.active);
      put('sluice_queue_oldest_age_seconds', labels, q.oldestAgeMs / 1000);
      if (q.bytes !== undefined) put('sluice_queue_bytes', labels, q.bytes);
    }
    for (const a of snapshot.admissible) put('sluice_admissible_work', { pool: a.pool }, a.work);
    for (const c of snapshot.circuits) put('sluice_circuit_state', { name: c.name }, c.state === 'open' ? 1 : 0.5);
    for (const v of snapshot.overrides) {
      put(
        'sluice_override_expiry_seconds',
        { scope: v.scope, name: v.name, kind: v.kind },
        Math.max(0, (v.untilMs - snapshot.at) / 1000),
      );
    }
    for (const c of snapshot.campaigns) {
      for (const [count, n] of Object.entries(c.counts)) put('sluice_campaign_messages', { campaign: c.id, count }, n);
    }
    fleetFigures(snapshot.fleet, put);
  }
  return FLEET_METRIC_NAMES.map((name) => ({ name, ...META[name]!, values: values.get(name)! }));
}

/**
 * Registers the fleet's figures on `registry`, read from the status snapshot when scraped
 * (nothing on the send path). One scrape reads one snapshot, and only in the process that
 * serves them (`leading`): the leading scheduler. Each app adds prom-client's process metrics
 * itself (`collectDefaultMetrics({ register: registry })`).
 */
export function registerFleetMetrics(
  registry: Pick<MetricsRegistry, 'registerMetric'>,
  options: FleetMetricsOptions,
): void {
  const maxAgeMs = options.maxAgeMs ?? 1_000;
  const clock = options.clock ?? systemClock;
  let last: { at: number; families: Promise<Map<string, FleetMetric>> } | undefined;
  const none = new Map(FLEET_METRIC_NAMES.map((name) => [name, { name, ...META[name]!, values: [] }]));
  const { leading } = options;
  const current = (): Promise<Map<string, FleetMetric>> => {
    if (leading !== undefined && !leading()) {
      last = undefined;
      return Promise.resolve(none);
    }
    if (last === undefined || clock() - last.at > maxAgeMs) {
      const families = options.snapshot().then(
        (s) => s,
        (err: unknown) => {
          options.onError?.(err);
          return undefined;
        },
      );
      last = { at: clock(), families: families.then((s) => new Map(fleetMetrics(s).map((m) => [m.name, m]))) };
    }
    return last.families;
  };
  for (const name of FLEET_METRIC_NAMES) {
    const { help, type } = META[name]!;
    registry.registerMetric({
      name,
      help,
      type,
      // One process reports the fleet: a cluster aggregate takes one.
      aggregator: 'first',
      async get() {
        const m = (await current()).get(name)!;
        return { name, help, type, aggregator: 'first', values: m.values };
      },
      reset() {},
    } as never);
  }
  if (leading === undefined) return;
  const help = 'Whether this scheduler leads (1) and so serves the fleet-wide figures, or not (0).';
  registry.registerMetric({
    name: 'sluice_leader',
    help,
    type: 'gauge',
    aggregator: 'sum',
    get() {
      const values = [{ labels: {}, value: leading() ? 1 : 0 }];
      return { name: 'sluice_leader', help, type: 'gauge', aggregator: 'sum', values };
    },
    reset() {},
  } as never);
}

/** What serves `/metrics`: the content type and the text of one scrape. */
export interface MetricsHandler {
  readonly contentType: string;
  body(): Promise<string>;
  /** Closes the status reader and the Redis connection, when they are the handler's own. */
  close(): Promise<void>;
}

/** Options of {@link createMetricsHandler}. */
export interface MetricsHandlerOptions {
  /** A prom-client `Registry`, with the process metrics already on it if you want them. */
  registry: MetricsRegistry;
  config: SluiceConfig;
  /** A connection of yours (not closed by the handler); else one is opened to `redis.url`. */
  redis?: Redis | undefined;
  /** Reports the failures of the handler's own connection. @defaultValue none: a failed scrape goes to `onError` */
  health?: RedisHealth | undefined;
  /** @defaultValue `createKeys(config.redis.prefix)` */
  keys?: Keys | undefined;
  /** A status reader of yours (not closed by the handler); else one is made. */
  status?: Pick<Status, 'snapshot'> | undefined;
  /** See {@link FleetMetricsOptions.leading}. @defaultValue none: always served */
  leading?: (() => boolean) | undefined;
  onError?: ((err: unknown) => void) | undefined;
}

/**
 * The fleet metrics of {@link registerFleetMetrics} on `registry`, read through a status
 * reader of the handler's own (or yours): what an app's `/metrics` route answers.
 */
export function createMetricsHandler(options: MetricsHandlerOptions): MetricsHandler {
  const { config, registry } = options;
  let own: { connections?: RoleConnections; status?: Status } = {};
  let status = options.status;
  if (status === undefined) {
    const connections =
      options.redis === undefined
        ? connectRoles(config, { maxRetriesPerRequest: 3, health: options.health })
        : undefined;
    const redis = options.redis ?? connections!.queues;
    const control = options.redis ?? connections!.limiter;
    const created = createStatus({ config, redis, control, keys: options.keys ?? createKeys(config.redis.prefix) });
    own = connections ? { connections, status: created } : { status: created };
    status = created;
  }
  const reader = status;
  registerFleetMetrics(registry, {
    snapshot: () => reader.snapshot(),
    onError: options.onError,
    leading: options.leading,
  });
  return {
    get contentType() {
      return registry.contentType;
    },
    body: () => registry.metrics(),
    async close() {
      const { status: s, connections } = own;
      own = {};
      await s?.close();
      await connections?.quit();
    },
  };
}

/** A `/metrics` HTTP server (see {@link serveMetrics}). */
export interface MetricsServer {
  /** `http://host:port`. */
  readonly url: string;
  /** Stops listening and ends open (keep-alive) connections. */
  close(): Promise<void>;
}

/**
 * Serves `GET /metrics` from `handler` on `host:port` (port 0: any free one) with node:http,
 * for processes that have no HTTP server of their own (scheduler, worker).
 */
export async function serveMetrics(options: {
  host: string;
  port: number;
  handler: Pick<MetricsHandler, 'contentType' | 'body'>;
  onError?: ((err: unknown) => void) | undefined;
}): Promise<MetricsServer> {
  const { handler } = options;
  const server: Server = createServer((req, res) => {
    if (req.method !== 'GET' || (req.url ?? '').split('?')[0] !== '/metrics') {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found: GET /metrics\n');
      return;
    }
    handler.body().then(
      (text) => res.writeHead(200, { 'content-type': handler.contentType }).end(text),
      (err: unknown) => {
        options.onError?.(err);
        res.writeHead(500, { 'content-type': 'text/plain' }).end('metrics unavailable\n');
      },
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { address, port } = server.address() as AddressInfo;
  let closed: Promise<void> | undefined;
  return {
    url: `http://${address.includes(':') ? `[${address}]` : address}:${port}`,
    close() {
      closed ??= new Promise<void>((resolve, reject) => {
        server.close((err) => (err ? reject(err) : resolve()));
        // A scraper keeps its connection open between scrapes.
        server.closeAllConnections();
      });
      return closed;
    },
  };
}
