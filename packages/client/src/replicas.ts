import type { Cluster, Redis } from 'ioredis';
import { SluiceError } from '@sluice/core';

/** The client's `replicas` option: how many replicas hold accepted mail before a send answers. */
export interface ReplicasOption {
  /** Replicas of every master written to that must have the writes (Redis `WAIT`). */
  count: number;
  /** How long to wait for them; past it the call fails with `redis_unavailable`. @defaultValue `1000` */
  timeoutMs?: number;
}

/**
 * Waits until `count` replicas of each master this connection wrote to have its writes so far
 * (`WAIT` on the connection that wrote them: on a cluster, on each master's). Fewer in time:
 * `redis_unavailable`, transient: the mail is written and will be sent, but a failover now could
 * lose it, so the caller retries with the same idempotency key (a repeat is a no-op).
 */
export function createReplicaWait(redis: Redis | Cluster, option: ReplicasOption): (what: string) => Promise<void> {
  const { count } = option;
  const timeoutMs = option.timeoutMs ?? 1_000;
  return async (what) => {
    // A master this client never wrote to answers at once (its replicas hold all of nothing).
    const masters = (redis as Cluster).isCluster ? (redis as Cluster).nodes('master') : [redis as Redis];
    const acks = await Promise.all(masters.map((node) => node.wait(count, timeoutMs)));
    const least = Math.min(...acks);
    if (least >= count) return;
    throw new SluiceError(
      'redis_unavailable',
      `${what}: written, but only ${least} of ${count} replicas had it within ${timeoutMs} ms ` +
        `(a failover now could lose it); retry with the same idempotencyKey: a repeat is a no-op`,
      { action: 'transient' },
    );
  };
}
