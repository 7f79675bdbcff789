import { readFileSync, readdirSync, readlinkSync } from 'node:fs';
import { expect, inject, it } from 'vitest';
import { Redis, type Cluster } from 'ioredis';
import { HOME_COUNT, createKeys } from '@sluice/core';
import { createClient } from '@sluice/client';
import { waitFor } from './support/fleet.js';
import { useFleet } from './support/use-fleet.js';

// Runs in the `cluster` project only (vitest.config.ts): a fleet on a three-master Redis
// Cluster. What the core files there cannot see: that the fleet's keys do spread over the
// masters, and how many connections a worker process opens on a cluster.

const fleet = useFleet({ schedulers: 1, workers: 1 });

const masters = (): Redis[] => (fleet().redis as unknown as Cluster).nodes('master');

/** Each master's keys under the fleet's prefix matching `pattern` (a SCAN of each). */
async function keysPerMaster(pattern: string): Promise<number[]> {
  return Promise.all(
    masters().map(async (node) => {
      let n = 0;
      let cursor = '0';
      do {
        const [next, found] = await node.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
        cursor = next;
        n += found.length;
      } while (cursor !== '0');
      return n;
    }),
  );
}

/**
 * The established TCP connections of process `pid` to the cluster's nodes: its socket
 * inodes (`/proc/<pid>/fd`) matched in `/proc/net/tcp{,6}` against the nodes' ports.
 */
function connectionsOf(pid: number): number {
  const ports = new Set(inject('clusterSeeds').map((s) => Number(new URL(s).port)));
  const toNodes = new Set<string>();
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    for (const line of readFileSync(file, 'utf8').trim().split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      const remotePort = parseInt(f[2]!.split(':')[1]!, 16);
      if (f[3] === '01' && ports.has(remotePort)) toNodes.add(f[9]!);
    }
  }
  let n = 0;
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    const link = (() => {
      try {
        return readlinkSync(`/proc/${pid}/fd/${fd}`);
      } catch {
        return '';
      }
    })();
    const inode = /^socket:\[(\d+)\]$/.exec(link)?.[1];
    if (inode && toNodes.has(inode)) n++;
  }
  return n;
}

it('spreads the records, the outcome streams and the dispatch queues over every master', async () => {
  const { prefix } = fleet();
  const keys = createKeys(prefix);
  expect(masters()).toHaveLength(3);
  const sent = await Promise.all(
    Array.from({ length: 120 }, (_, i) =>
      fleet().client.send({
        from: 'Acme <news@acme.test>',
        to: `user${i}@example.test`,
        subject: `m${i}`,
        text: 'hi',
        priority: i % 3 ? 'normal' : 'high',
      }),
    ),
  );
  await waitFor(() => fleet().sandbox.accepted().length >= 120, 30_000, '120 accepted');
  expect(
    new Set(
      fleet()
        .sandbox.accepted()
        .map((a) => a.sluiceId),
    ),
  ).toEqual(new Set(sent.map((m) => m.id)));
  const records = await keysPerMaster(`${prefix}:*:msg:*`);
  expect(records.reduce((a, b) => a + b, 0)).toBe(120);
  // Sixteen homes over three masters: each holds five or six of them, so a share of the records.
  for (const n of records) expect(n, `records per master: ${records.join(', ')}`).toBeGreaterThan(120 / 6);
  const streams = await keysPerMaster(`${prefix}:{h*}:outcomes`);
  expect(streams.reduce((a, b) => a + b, 0)).toBe(HOME_COUNT);
  for (const n of streams) expect(n).toBeGreaterThanOrEqual(4);
  // Three dispatch partitions a class (the harness's redis.dispatchPartitions), one per master.
  const dispatch = await keysPerMaster(`${prefix}:dispatch-*:meta`);
  expect(dispatch).toEqual([4, 4, 4]);
  expect(await fleet().redis.exists(keys.message(sent[0]!.id))).toBe(1);
});

it('opens a bounded number of connections per worker process', async () => {
  const worker = await fleet().startWorker();
  await new Promise((r) => setTimeout(r, 2_000));
  const opened = connectionsOf(worker.child.pid!);
  // A cluster client of its own (the worker's commands), one for /metrics, and one per BullMQ
  // Worker (four classes × three partitions, each a cluster client for its blocking reads),
  // each connected to at most every node (docs/operations/running-a-fleet.md).
  const nodes = inject('clusterSeeds').length;
  console.log(`cluster: a worker process holds ${opened} connections to a cluster of ${nodes} nodes (3 partitions)`);
  expect(opened).toBeGreaterThanOrEqual(4 * 3);
  expect(opened).toBeLessThanOrEqual((2 + 4 * 3) * nodes);
  await worker.stop();
  fleet().processes.splice(fleet().processes.indexOf(worker), 1);
});

it('answers a send with `replicas` once each master it wrote to has it on its replica', async () => {
  const { prefix } = fleet();
  const keys = createKeys(prefix);
  const cluster = fleet().redis as unknown as Cluster;
  const client = createClient({ redis: cluster, prefix, fleetCheck: 'off', replicas: { count: 1 } });
  try {
    // Forty records over the sixteen homes: every master is written to.
    const sent = await client.sendBulk(
      Array.from({ length: 40 }, (_, i) => ({
        from: 'Acme <id@acme.test>',
        to: `replicated${i}@example.test`,
        subject: 'Your code',
        text: '123456',
        priority: 'critical' as const,
      })),
    );
    // Each record is on a replica as the call answers: read on each replica (READONLY; a key of
    // another master's slots is a MOVED there, counted as none).
    const table = (await masters()[0]!.cluster('NODES')) as string;
    const replicaAddrs = table
      .split('\n')
      .filter((line) => line.split(' ')[2]?.split(',').includes('slave'))
      .map((line) => line.split(' ')[1]!.split('@')[0]!);
    expect(replicaAddrs).toHaveLength(3);
    const replicas = replicaAddrs.map((addr) => new Redis(`redis://${addr}`));
    try {
      await Promise.all(replicas.map((r) => r.readonly()));
      const onReplicas = await Promise.all(
        sent.map(async (m) => {
          const found = await Promise.all(replicas.map((r) => r.exists(keys.message(m.id)).catch(() => 0)));
          return found.reduce((a, b) => a + b, 0);
        }),
      );
      expect(onReplicas).toEqual(sent.map(() => 1));
    } finally {
      for (const r of replicas) r.disconnect();
    }
  } finally {
    await client.close();
  }
});
