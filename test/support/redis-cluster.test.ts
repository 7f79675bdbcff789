import { Cluster } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { startRedisCluster } from './redis-cluster.js';

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe('startRedisCluster', () => {
  it('serves keys from every master, fails a killed master over to its replica, takes it back and stops every process', async () => {
    const cluster = await startRedisCluster({ masters: 3, replicas: 1 });
    const client = new Cluster(cluster.seeds, { retryDelayOnFailover: 200, maxRedirections: 64 });
    client.on('error', () => undefined);
    try {
      const nodes = await cluster.nodes();
      expect(nodes.map((n) => n.role).sort()).toEqual(['master', 'master', 'master', 'replica', 'replica', 'replica']);

      const keys = Array.from({ length: 60 }, (_, i) => `spread:${i}`);
      const before = await cluster.commandsPerMaster();
      await Promise.all(keys.map((k) => client.set(k, 'v1')));
      const owners = await Promise.all(keys.map((k) => cluster.masterOf(k)));
      const masters = nodes.filter((n) => n.role === 'master').map((n) => n.port);
      expect(new Set(owners)).toEqual(new Set(masters));
      // Each master ran at least the writes of the keys it serves: they went to it, not through another.
      const after = await cluster.commandsPerMaster();
      for (const port of masters) {
        const owned = owners.filter((o) => o === port).length;
        expect((after.get(port) ?? 0) - (before.get(port) ?? 0)).toBeGreaterThanOrEqual(owned);
      }

      const victim = owners[0]!;
      const lost = keys.filter((_, i) => owners[i] === victim);
      await cluster.killMaster(victim);
      const failover = await cluster.waitForFailover(victim);
      expect(nodes.find((n) => n.port === failover.promoted)?.role).toBe('replica');
      expect(failover.ms).toBeGreaterThan(0);
      for (const key of lost) expect(await cluster.masterOf(key)).toBe(failover.promoted);
      await Promise.all(lost.map((k) => client.set(k, 'v2')));
      expect(await Promise.all(lost.map((k) => client.get(k)))).toEqual(lost.map(() => 'v2'));

      await cluster.restart(victim);
      expect((await cluster.nodes()).find((n) => n.port === victim)?.role).toBe('replica');
    } finally {
      await client.quit().catch(() => client.disconnect());
      await cluster.stop();
    }
    expect(cluster.pids()).toHaveLength(7);
    expect(cluster.pids().filter(alive)).toEqual([]);
  });
});
