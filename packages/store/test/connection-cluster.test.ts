import type { Cluster, Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RedisEndpoint } from '@sluice/core';
import { connectEndpoint, createRedisHealth, isRedisConnectionError } from '@sluice/store';
import { startRedisCluster, type RedisCluster } from '../../../test/support/redis-cluster.js';
import { startRedisServer } from '../../../test/support/redis-server.js';

/** Keys until every master serves at least `each` of them. */
async function keysOnEveryMaster(cluster: RedisCluster, each: number): Promise<Map<string, number>> {
  const masters = (await cluster.nodes()).filter((n) => n.role === 'master').map((n) => n.port);
  const owners = new Map<string, number>();
  for (let i = 0; masters.some((m) => [...owners.values()].filter((o) => o === m).length < each); i++) {
    owners.set(`profile:${i}`, await cluster.masterOf(`profile:${i}`));
  }
  return owners;
}

/** Resolves once `client` is ready: at once when it is. */
const ready = (client: Cluster | Redis): Promise<unknown> =>
  client.status === 'ready' ? Promise.resolve() : new Promise((r) => client.once('ready', r));

/** `'still waiting'` unless `promise` settles within a second. */
const within1s = (promise: Promise<unknown>): Promise<unknown> =>
  Promise.race([promise, new Promise((r) => setTimeout(() => r('still waiting'), 1_000))]);

const quiet = { info: () => undefined, warn: () => undefined, error: () => undefined };

describe('connectEndpoint on a Redis Cluster', () => {
  let cluster: RedisCluster;
  let endpoint: RedisEndpoint;
  const open: Cluster[] = [];
  const connect = (role: 'worker' | 'producer', health = createRedisHealth({ url: 'cluster', logger: quiet })) => {
    const client = connectEndpoint(endpoint, { role, health, connectionName: `sluice-test-${role}` }) as Cluster;
    open.push(client);
    return { client, health };
  };

  beforeAll(async () => {
    cluster = await startRedisCluster({ masters: 3, replicas: 1 });
    endpoint = { kind: 'cluster', seeds: cluster.seeds, natMap: {}, tls: false, resolveHostnames: true };
  });
  afterAll(async () => {
    for (const client of open) client.disconnect();
    await cluster?.stop();
  });

  it('gives a worker and a producer their profile and serves keys on every master', async () => {
    const { client: worker, health } = connect('worker');
    const { client: producer } = connect('producer');
    await health.ready();
    expect(health.up).toBe(true);
    expect(worker.options).toMatchObject({
      scaleReads: 'master',
      enableAutoPipelining: false,
      enableOfflineQueue: true,
    });
    expect(worker.options.redisOptions).toMatchObject({ maxRetriesPerRequest: null });
    expect(producer.options).toMatchObject({
      scaleReads: 'master',
      enableAutoPipelining: true,
      enableOfflineQueue: false,
    });
    expect(producer.options.redisOptions?.maxRetriesPerRequest).toBeGreaterThan(0);
    expect(worker.options.retryDelayOnFailover! * worker.options.maxRedirections!).toBeGreaterThan(15_000);

    const owners = await keysOnEveryMaster(cluster, 3);
    await ready(producer);
    await Promise.all([...owners.keys()].map((k) => producer.set(k, `p:${k}`)));
    expect(await Promise.all([...owners.keys()].map((k) => worker.get(k)))).toEqual(
      [...owners.keys()].map((k) => `p:${k}`),
    );
    // Every master holds its share, and each connection there carries the role's name.
    for (const node of worker.nodes('master')) {
      expect(await node.dbsize()).toBeGreaterThanOrEqual(3);
      expect(await node.client('GETNAME')).toBe('sluice-test-worker');
    }
  });

  it('keeps a worker serving through a master failover: its commands wait for the promoted replica', async () => {
    const { client: worker } = connect('worker');
    await ready(worker);
    const owners = await keysOnEveryMaster(cluster, 2);
    const victim = [...owners.values()][0]!;
    const lost = [...owners.keys()].filter((k) => owners.get(k) === victim);
    await Promise.all(lost.map((k) => worker.set(k, 'before')));

    await cluster.killMaster(victim);
    // Sent while the master is down and not yet replaced: they wait, then land on its replica.
    const during = Promise.all(lost.map((k) => worker.set(k, 'during')));
    const failover = await cluster.waitForFailover(victim);
    await during;
    expect(await Promise.all(lost.map((k) => worker.get(k)))).toEqual(lost.map(() => 'during'));
    for (const k of lost) expect(await cluster.masterOf(k)).toBe(failover.promoted);
    await cluster.restart(victim);
  });

  it('fails a producer fast while the cluster is gone, where a worker waits for it', async () => {
    const { client: producer, health } = connect('producer');
    const { client: worker } = connect('worker');
    await Promise.all([health.ready(), ready(worker)]);
    await producer.set('profile:gone', '1');
    await cluster.stop();

    const waiting = worker.get('profile:gone').then(
      () => 'answered',
      (err: Error) => err.message,
    );
    const err = await producer.get('profile:gone').then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(Error);
    expect(isRedisConnectionError(err)).toBe(true);
    expect(await within1s(waiting)).toBe('still waiting');
    expect(health.up).toBe(false);
  });
});

describe('connectEndpoint on one node', () => {
  it('gives the same profile as on a cluster: a producer fails at once while Redis is away, a worker waits', async () => {
    const server = await startRedisServer();
    const endpoint: RedisEndpoint = { kind: 'node', url: server.url };
    const worker = connectEndpoint(endpoint, { role: 'worker', connectionName: 'sluice-test-worker' }) as Redis;
    const producer = connectEndpoint(endpoint, { role: 'producer' }) as Redis;
    try {
      await Promise.all([ready(worker), ready(producer)]);
      expect(worker.options).toMatchObject({ maxRetriesPerRequest: null, connectionName: 'sluice-test-worker' });
      expect(producer.options).toMatchObject({ enableOfflineQueue: false });
      await producer.set('profile:node', '1');
      expect(await worker.get('profile:node')).toBe('1');

      await server.kill('SIGKILL');
      const waiting = worker.get('profile:node');
      const err = await producer.get('profile:node').then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(isRedisConnectionError(err)).toBe(true);
      expect(await within1s(waiting)).toBe('still waiting');
      await server.restart();
      // The restarted Redis has no data (no persistence): the waiting command got its answer.
      expect(await waiting).toBeNull();
    } finally {
      worker.disconnect();
      producer.disconnect();
      await server.stop();
    }
  });
});
