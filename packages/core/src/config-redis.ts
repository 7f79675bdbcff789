import { z } from 'zod';
import { host, name, redisUrl } from './config-fields.js';
import { MAX_DISPATCH_PARTITIONS } from './keys.js';
import { formatPath } from './parse.js';

// Where the fleet's Redis is, by role (issue 31): `redis.url` for everything by default; the
// BullMQ queues and the limiter may each move to an endpoint of their own, one node or a Redis
// Cluster. Connections are opened by `connectEndpoint` (packages/store), which gives each role
// its profile of ioredis options.

/** Whether `value` can seed a cluster: a node's `redis://` or `rediss://` URL, on database 0 (a cluster has no other). */
function clusterSeed(value: string): boolean {
  try {
    const u = new URL(value);
    return ['redis:', 'rediss:'].includes(u.protocol) && u.hostname !== '' && /^(\/0?)?$/.test(u.pathname);
  } catch {
    return false;
  }
}

const seed = redisUrl.refine(clusterSeed, {
  message: 'must be a redis:// or rediss:// URL of a node (a cluster has no socket paths and no database but 0)',
});

/** An address a node announces, as `host:port`. */
const ANNOUNCED = /^[^\s:]+:\d{1,5}$/;

/** What ioredis connects to instead of an announced address. */
const reachable = z.strictObject({
  /** The host (or address) to connect to. */
  host,
  /** The port to connect to. */
  port: z.number().int().min(1).max(65_535),
});

/** A Redis Cluster (ElastiCache in cluster mode, or your own). */
const clusterSchema = z
  .strictObject({
    /**
     * Seed nodes, as `redis://[user:password@]host:port` (`rediss://` for TLS): any few nodes of
     * the cluster, which tells the client the rest. Every seed takes the same scheme and
     * credentials, which the client uses for every node it finds.
     */
    cluster: z.array(seed).min(1),
    /**
     * The addresses the nodes announce (`host:port`, as `CLUSTER SLOTS` shows them) mapped to
     * where this process reaches them: for a cluster behind NAT or in another Docker network.
     * @defaultValue none: the announced addresses are reachable
     */
    natMap: z
      .record(z.string(), reachable)
      // Checked here rather than as the record's key schema: a bad key there fails the whole
      // endpoint, at its path, instead of naming the key.
      .superRefine((map, ctx) => {
        for (const key of Object.keys(map)) {
          if (!ANNOUNCED.test(key)) ctx.addIssue({ code: 'custom', path: [key], message: 'must be host:port' });
        }
      })
      .optional(),
    /**
     * Resolve the seeds' host names to addresses before connecting (ioredis's default). TLS on
     * ElastiCache needs `false`, the identity lookup: the certificate names the host, so the
     * client must connect to the name, not to an address it resolved.
     * @defaultValue `false` with `rediss://` seeds, else `true`
     */
    resolveHostnames: z.boolean().optional(),
  })
  .superRefine((c, ctx) => {
    // The seeds' own checks have run (and reported) already; this compares good seeds only.
    if (c.cluster.length === 0 || !c.cluster.every(clusterSeed)) return;
    const first = new URL(c.cluster[0]!);
    c.cluster.forEach((s, i) => {
      const u = new URL(s);
      if (u.protocol !== first.protocol) {
        ctx.addIssue({
          code: 'custom',
          path: ['cluster', i],
          message: `must use ${first.protocol}// as the first seed`,
        });
      } else if (u.username !== first.username || u.password !== first.password) {
        ctx.addIssue({ code: 'custom', path: ['cluster', i], message: 'must have the credentials of the first seed' });
      }
    });
  });

const ENDPOINT = 'must be a Redis URL (one node), or { cluster: [seed URLs] } (a Redis Cluster)';

/**
 * What a union that matched neither option says. A cluster object with a value of the wrong
 * type inside (a missing port, a seed list that is no list) fails the union as a whole, at the
 * endpoint's path: the message names the field within it, so the reader still finds it.
 */
function endpointError(issue: z.core.$ZodRawIssue): string {
  const input = issue.input;
  if (issue.code !== 'invalid_union' || typeof input !== 'object' || input === null || !('cluster' in input)) {
    return ENDPOINT;
  }
  const inner = issue.errors[1]?.[0];
  if (inner === undefined) return ENDPOINT;
  const unknown = inner.code === 'unrecognized_keys' ? inner.keys[0] : undefined;
  const at = unknown === undefined ? inner.path : [...inner.path, unknown];
  return `${formatPath(at)}: ${unknown === undefined ? inner.message : 'unknown key'}`;
}

/**
 * Where one role's Redis is: a Redis URL (one node, as `redis.url` takes it), or `{ cluster:
 * [seed URLs], natMap?, resolveHostnames? }` for a Redis Cluster.
 */
export const endpointSchema = z.union([redisUrl, clusterSchema], { error: endpointError });

/** Where the fleet's Redis is, and the prefix of every key and queue. */
export const redisSchema = z
  .strictObject({
    url: redisUrl.default('redis://127.0.0.1:6379'),
    /** Prefix of every key and queue: fleets under different prefixes share nothing. */
    prefix: name.default('sluice'),
    /**
     * Where the BullMQ queues (intake, campaigns, dispatch) live: a Redis URL, or `{ cluster:
     * [seed URLs] }` for a Redis Cluster. @defaultValue `redis.url`
     */
    queues: endpointSchema.optional(),
    /**
     * Where the limiter's keys (`{<prefix>:rl}`: buckets, slots, adjustments) live: a Redis URL,
     * or `{ cluster: [seed URLs] }` for a Redis Cluster. @defaultValue `redis.url`
     */
    limiter: endpointSchema.optional(),
    /**
     * Each class's dispatch queue is this many queues (partitions), each under a hash tag of its
     * own, so the dispatch hop of a Redis Cluster spreads over its masters: about one per master
     * of `redis.queues`. Admission puts a message in one by a stable hash of its id; every worker
     * consumes them all (one BullMQ Worker, so one blocking connection, per class and
     * partition). Raise it freely; lower it only once the dispatch queues are empty (a worker
     * consumes only partitions below it).
     */
    dispatchPartitions: z.number().int().min(1).max(MAX_DISPATCH_PARTITIONS).default(1),
  })
  .prefault({});

/** The `redis` part of a validated config. */
export type RedisConfig = z.output<typeof redisSchema>;

/** A Redis the fleet connects to for one role: one node, or a Redis Cluster. */
export type RedisEndpoint =
  | {
      kind: 'node';
      /** `redis://…`, `rediss://…` or a socket path, as `redis.url` takes it. */
      url: string;
    }
  | {
      kind: 'cluster';
      /** The seed nodes' URLs; all of one scheme and one set of credentials. */
      seeds: string[];
      /** Announced `host:port` → where to connect instead. */
      natMap: Record<string, { host: string; port: number }>;
      /** The seeds are `rediss://`: every node is reached over TLS. */
      tls: boolean;
      /** Resolve host names before connecting; `false` is the identity lookup TLS on ElastiCache needs. */
      resolveHostnames: boolean;
    };

/** The Redis of each role that may live apart from `redis.url`. */
export interface RedisEndpoints {
  /** The BullMQ queues'. */
  queues: RedisEndpoint;
  /** The limiter's. */
  limiter: RedisEndpoint;
}

function endpoint(value: z.output<typeof endpointSchema> | undefined, url: string): RedisEndpoint {
  if (value === undefined) return { kind: 'node', url };
  if (typeof value === 'string') return { kind: 'node', url: value };
  const tls = value.cluster[0]!.startsWith('rediss:');
  return {
    kind: 'cluster',
    seeds: value.cluster,
    natMap: value.natMap ?? {},
    tls,
    resolveHostnames: value.resolveHostnames ?? !tls,
  };
}

/**
 * Each role's Redis, with the defaults applied: `redis.queues` and `redis.limiter` where
 * given, else `redis.url` (after `REDIS_URL` has overridden it).
 */
export function redisEndpoints(config: { redis: RedisConfig }): RedisEndpoints {
  const { redis } = config;
  return { queues: endpoint(redis.queues, redis.url), limiter: endpoint(redis.limiter, redis.url) };
}
