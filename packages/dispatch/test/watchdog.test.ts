import { Queue, Worker, type ConnectionOptions } from 'bullmq';
import { Cluster, Redis } from 'ioredis';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWorkerWatchdog, keySlot } from '../src/watchdog.js';
import { useRedisPrefix } from '../../../test/support/redis-prefix.js';
import { startRedisServer, type RedisServer } from '../../../test/support/redis-server.js';
import { startRedisCluster } from '../../../test/support/redis-cluster.js';

// The watchdog against real Redis. A Worker whose blocking connection is not ready is one whose
// connection points at a frozen redis-server (SIGSTOP): the kernel accepts the connection, the
// server never answers the ready check, so ioredis stays in `connect` and BullMQ's connection never
// comes up, for as long as the test likes (no timing luck).

const r = useRedisPrefix();
let frozen: RedisServer;

beforeAll(async () => {
  frozen = await startRedisServer({ oneSlotCluster: false });
  await frozen.kill('SIGSTOP');
});
afterAll(async () => {
  await frozen.kill('SIGCONT');
  await frozen.stop();
});

const QUEUE = '{watched}';
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

async function waitFor(what: string, done: () => boolean, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

/** A logger whose lines the test reads. */
function captured(): { logger: pino.Logger; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  const logger = pino(
    { level: 'warn' },
    { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) },
  );
  return { logger, lines };
}

/** A Worker of {@link QUEUE} that records the jobs it processes. */
function worker(connection: ConnectionOptions, processed: string[]): Worker {
  const w = new Worker(QUEUE, async (job) => void processed.push(job.id ?? ''), { connection, prefix: r.prefix });
  // A frozen server's connection errors (on close) are expected here.
  w.on('error', () => undefined);
  return w;
}

const frozenConnection = (): ConnectionOptions => ({
  host: '127.0.0.1',
  port: frozen.port,
  maxRetriesPerRequest: null,
});

describe('createWorkerWatchdog', () => {
  it('replaces a Worker whose blocking connection is not ready within the bound; the new one processes a job', async () => {
    const healthy = new Redis(r.url, { maxRetriesPerRequest: null });
    const queue = new Queue(QUEUE, { connection: healthy, prefix: r.prefix });
    const { logger, lines } = captured();
    const processed: string[] = [];
    const replaced: { next: Worker; old: Worker; at: number }[] = [];
    let made = 0;
    const watchdog = createWorkerWatchdog({
      logger,
      notReadyMs: 1_000,
      intervalMs: 100,
      onReplace: (next, old) => replaced.push({ next, old, at: Date.now() }),
    });
    const started = Date.now();
    const first = watchdog.watch(() => worker(made++ === 0 ? frozenConnection() : healthy, processed));

    await waitFor('the replacement', () => replaced.length > 0, 10_000);
    const [replacement] = replaced;
    expect(replacement?.old).toBe(first);
    // Not before the bound, and within it plus a few checks.
    expect(replacement!.at - started).toBeGreaterThanOrEqual(1_000);
    expect(replacement!.at - started).toBeLessThan(1_000 + 2_000);
    expect(first.closing).toBeDefined();
    await queue.add('job', {}, { jobId: 'after' });
    await waitFor('the job processed', () => processed.includes('after'), 10_000);
    expect(replaced).toHaveLength(1);
    const warnings = lines.filter((l) => l.event === 'worker_recreated');
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({ queue: QUEUE });
    expect(warnings[0]?.notReadyMs).toBeGreaterThanOrEqual(1_000);

    await watchdog.close();
    await replacement!.next.close();
    await queue.close();
    await healthy.quit();
  });

  it('never replaces an idle Worker on a ready connection, over several intervals', async () => {
    const healthy = new Redis(r.url, { maxRetriesPerRequest: null });
    const queue = new Queue(QUEUE, { connection: healthy, prefix: r.prefix });
    const { logger, lines } = captured();
    const processed: string[] = [];
    let replaced = 0;
    const watchdog = createWorkerWatchdog({ logger, notReadyMs: 300, intervalMs: 50, onReplace: () => replaced++ });
    const idle = watchdog.watch(() => worker(healthy, processed));
    await idle.waitUntilReady();

    // Blocked in BZPOPMIN on an empty queue all along: thirty checks, six bounds.
    await sleep(1_800);
    expect(replaced).toBe(0);
    expect(lines).toEqual([]);
    await queue.add('job', {}, { jobId: 'idle' });
    await waitFor('the job processed', () => processed.includes('idle'), 10_000);

    await watchdog.close();
    await idle.close();
    await queue.close();
    await healthy.quit();
  });

  it('never replaces a paused Worker, even one whose connection is not ready; it does once resumed', async () => {
    const { logger } = captured();
    let replaced: Worker | undefined;
    const watchdog = createWorkerWatchdog({
      logger,
      notReadyMs: 300,
      intervalMs: 50,
      onReplace: (next) => (replaced = next),
    });
    const paused = watchdog.watch(() => worker(frozenConnection(), []));
    // As Sluice pauses a Worker that holds no connection slots.
    await paused.pause(true);
    await sleep(1_500);
    expect(replaced).toBeUndefined();

    // The same Worker, resumed, is judged again.
    void paused.resume();
    await waitFor('the replacement', () => replaced !== undefined, 5_000);
    await watchdog.close();
    await replaced?.close(true);
  });

  it('leaves a Worker its owner closes, and any after its own close()', async () => {
    const { logger } = captured();
    let replaced = 0;
    const watchdog = createWorkerWatchdog({ logger, notReadyMs: 300, intervalMs: 50, onReplace: () => replaced++ });
    const closedByOwner = watchdog.watch(() => worker(frozenConnection(), []));
    await closedByOwner.close(true);
    const afterClose = watchdog.watch(() => worker(frozenConnection(), []));
    await watchdog.close();
    const late = watchdog.watch(() => worker(frozenConnection(), []));
    await sleep(1_000);
    expect(replaced).toBe(0);
    await afterClose.close(true);
    await late.close(true);
  });

  it('computes a key slot as CLUSTER KEYSLOT does', () => {
    // The examples of the CLUSTER KEYSLOT reference page.
    expect(keySlot('somekey')).toBe(11_058);
    expect(keySlot('foo{hash_tag}')).toBe(2_515);
    expect(keySlot('{hash_tag}:other')).toBe(2_515);
  });
});

describe('on a Redis Cluster whose master of the queue is killed', () => {
  it('a watched Worker processes jobs again after the failover', async () => {
    const cluster = await startRedisCluster({ masters: 3, replicas: 1 });
    const seeds = cluster.seeds.map((url) => ({ host: '127.0.0.1', port: Number(new URL(url).port) }));
    const client = (): Cluster => new Cluster(seeds, { redisOptions: { maxRetriesPerRequest: null } });
    const consumer = client();
    const producer = client();
    const { logger, lines } = captured();
    const processed: string[] = [];
    let replaced = 0;
    let current: Worker | undefined;
    const watchdog = createWorkerWatchdog({
      logger,
      notReadyMs: 5_000,
      intervalMs: 250,
      onReplace: (next) => {
        replaced++;
        current = next;
      },
    });
    const queue = new Queue(QUEUE, { connection: producer, prefix: r.prefix });
    try {
      current = watchdog.watch(() => worker(consumer, processed));
      expect(keySlot(`${r.prefix}:${QUEUE}:marker`)).toBe(Number(await producer.cluster('KEYSLOT', QUEUE)));
      await queue.add('job', {}, { jobId: 'before' });
      await waitFor('the job before', () => processed.includes('before'), 15_000);
      // The watchdog's view of the blocking cluster client: the master of the queue's slot, connected.
      const blocking = (await current.getBackend().blockingClient) as unknown as Cluster;
      const key = blocking.slots[keySlot(QUEUE)]?.[0];
      const node = blocking.nodes('master').find((n) => `${n.options.host}:${n.options.port}` === key);
      expect(node?.options.port).toBe(await cluster.masterOf(QUEUE));
      expect(node?.status).toBe('ready');

      const master = await cluster.masterOf(QUEUE);
      await cluster.killMaster(master);
      const failover = await cluster.waitForFailover(master);
      await queue.add('job', {}, { jobId: 'after' }).catch(async () => {
        // The producer may learn the new master only on a retry.
        await queue.add('job', {}, { jobId: 'after' });
      });
      await waitFor('the job after the failover', () => processed.includes('after'), 60_000);
      console.log(
        `failover in ${failover.ms} ms; watchdog acted: ${replaced > 0 ? `yes (${replaced})` : 'no'}`,
        lines.filter((l) => l.event === 'worker_recreated'),
      );
    } finally {
      await watchdog.close();
      await current?.close(true);
      await queue.close();
      consumer.disconnect();
      producer.disconnect();
      await cluster.stop();
    }
  });
});
