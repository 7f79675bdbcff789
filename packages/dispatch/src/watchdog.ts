import type { Worker } from 'bullmq';
import type { Logger } from 'pino';

/** Options of {@link createWorkerWatchdog}. */
export interface WorkerWatchdogOptions {
  logger: Logger;
  /**
   * How long a Worker's blocking connection may stay not ready before the Worker is closed and
   * made again; `0` turns the watchdog off (it watches nothing). @defaultValue `30_000`
   */
  notReadyMs?: number;
  /** How often every watched Worker is checked. @defaultValue a third of `notReadyMs`, at most `5000` */
  intervalMs?: number;
  /** Told of each replacement once the new Worker runs, so its owner's lists hold the new one. */
  onReplace?(next: Worker, old: Worker): void;
}

/** Replaces BullMQ Workers whose blocking connection stays not ready (see {@link createWorkerWatchdog}). */
export interface WorkerWatchdog {
  /** Makes a Worker with `make` and watches it; `make` is called again for each replacement. */
  watch(make: () => Worker): Worker;
  /** Stops the timer and waits for the Workers it closed. Those it watches are their owner's to close. */
  close(): Promise<void>;
}

/**
 * What the watchdog reads of a blocking client (an ioredis `Redis` or `Cluster` behind BullMQ's
 * `IRedisClient` proxy, which passes these fields through).
 */
interface BlockingClient {
  status: string;
  isCluster: boolean;
  /** A Cluster's slot map: the node keys (`host:port`, master first) of each slot. */
  slots?: string[][];
  nodes?(role?: 'master'): NodeClient[];
}

interface NodeClient {
  status: string;
  options: { host?: string; port?: number };
  /** ioredis' commands waiting for the node's connection (not declared public; read if there). */
  offlineQueue?: { length: number };
}

interface Watched {
  worker: Worker;
  make: () => Worker;
  /** The blocking client, once BullMQ's connection is up (connected, ready check and INFO answered). */
  client: BlockingClient | undefined;
  /** The slot of the queue's keys (on a Cluster: the one master its BZPOPMIN goes to). */
  slot: number;
  notReadySince: number | undefined;
}

/**
 * Closes and makes again a BullMQ Worker whose blocking connection has not been ready for
 * `notReadyMs`, as BullMQ's maintainer advises for a Worker that does not reconnect by itself
 * (bullmq#3185). On a Redis Cluster each Worker's blocking connection is a cluster client of its
 * own, and one can stay wedged after a failover, a node connection stuck, the Worker fetching
 * nothing ever again (bullmq#4138). A Worker that is paused (Sluice pauses the workers that hold
 * no connection slots) or closing is never judged; an idle one, blocked in BZPOPMIN on a ready
 * connection, is ready.
 */
export function createWorkerWatchdog(options: WorkerWatchdogOptions): WorkerWatchdog {
  const { logger } = options;
  const notReadyMs = options.notReadyMs ?? 30_000;
  const intervalMs = options.intervalMs ?? Math.min(5_000, Math.max(100, Math.floor(notReadyMs / 3)));
  const watched = new Set<Watched>();
  /** Workers this watchdog closes: their `closing` event is not their owner's. */
  const retiring = new Set<Worker>();
  const closes = new Set<Promise<void>>();
  let closed = false;
  const timer = notReadyMs > 0 ? setInterval(check, intervalMs).unref() : undefined;

  function follow(make: () => Worker): Watched {
    const worker = make();
    const entry: Watched = {
      worker,
      make,
      client: undefined,
      slot: keySlot(worker.keys.marker ?? worker.name),
      notReadySince: undefined,
    };
    // Resolves once BullMQ's blocking connection is connected and answered; never, while it is not.
    void worker
      .getBackend()
      .blockingClient?.then((client) => (entry.client = client as unknown as BlockingClient))
      .catch(() => undefined);
    // Closed by its owner (its shutdown, an idle campaign): no longer watched.
    worker.once('closing', () => {
      if (!retiring.has(worker) && entry.worker === worker) watched.delete(entry);
    });
    return entry;
  }

  function check(): void {
    const now = Date.now();
    // A copy: a replacement joins the set.
    for (const entry of [...watched]) {
      if (closed) return;
      const { worker } = entry;
      if (worker.closing || worker.isPaused() || blockingReady(entry)) {
        entry.notReadySince = undefined;
        continue;
      }
      entry.notReadySince ??= now;
      if (now - entry.notReadySince >= notReadyMs) replace(entry, now - entry.notReadySince);
    }
  }

  function replace(entry: Watched, ms: number): void {
    const old = entry.worker;
    logger.warn(
      { event: 'worker_recreated', queue: old.name, notReadyMs: ms },
      `worker of ${old.name} recreated: its blocking connection was not ready for ${ms} ms`,
    );
    retiring.add(old);
    // Forced: a wedged Worker may never finish its jobs. Those in flight keep their lock until
    // `lockDuration` ends, then stall and run again (here or in another process), as a killed
    // worker's do; a dispatch job's record decides then whether it is sent again.
    const closing = old
      .close(true)
      .catch((err: unknown) => logger.warn({ err, queue: old.name }, 'closing a wedged worker failed'))
      .finally(() => {
        retiring.delete(old);
        closes.delete(closing);
      });
    closes.add(closing);
    watched.delete(entry);
    const next = follow(entry.make);
    watched.add(next);
    options.onReplace?.(next.worker, old);
  }

  return {
    watch(make) {
      const entry = follow(make);
      if (timer && !closed) watched.add(entry);
      return entry.worker;
    },
    async close() {
      closed = true;
      if (timer) clearInterval(timer);
      watched.clear();
      await Promise.all([...closes]);
    },
  };
}

/**
 * Whether a Worker's blocking connection can serve its BZPOPMIN now: BullMQ's connection is up
 * (`RedisConnection.client` resolved), the client is live as BullMQ judges it (`ready`, or
 * `connect` on a Cluster: `isClientLive` of redis-queue-backend.js) and, on a Cluster, the
 * connection to the master of the queue's slot is ready, or has never been needed (ioredis
 * connects a node lazily: `wait` with nothing queued).
 */
function blockingReady(entry: Watched): boolean {
  const { client } = entry;
  if (!client) return false;
  const live = client.status === 'ready' || (client.isCluster && client.status === 'connect');
  if (!live || !client.isCluster) return live;
  const key = client.slots?.[entry.slot]?.[0];
  const node = client.nodes?.('master').find((n) => `${n.options.host}:${n.options.port}` === key);
  if (!node) return true;
  return node.status === 'ready' || (node.status === 'wait' && (node.offlineQueue?.length ?? 0) === 0);
}

/** The Redis Cluster slot of `key` (CRC16-XMODEM of its hash tag, mod 16384), as `CLUSTER KEYSLOT` says. */
export function keySlot(key: string): number {
  const open = key.indexOf('{');
  const close = open < 0 ? -1 : key.indexOf('}', open + 1);
  const tagged = close > open + 1 ? key.slice(open + 1, close) : key;
  let crc = 0;
  for (const byte of Buffer.from(tagged)) {
    crc ^= byte << 8;
    for (let bit = 0; bit < 8; bit++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  }
  return crc % 16_384;
}
