import type { Redis } from 'ioredis';
import { defineScripts, type ScriptedRedis } from './internal/scripts.js';

/** Options of {@link createLease}. */
export interface LeaseOptions {
  /** A connection of the caller's; not closed here. */
  redis: Redis;
  key: string;
  /** This process's name. */
  holder: string;
  /** How long a lease lasts unless renewed. */
  ttlMs: number;
}

/** A lease one process at a time holds (e.g. the governor's leader), taken over when it lapses. */
export interface Lease {
  /** Takes or renews the lease; whether this holder has it now. */
  hold(): Promise<boolean>;
}

/** Creates a lease on `key`: one Lua call per `hold()`. */
export function createLease(options: LeaseOptions): Lease {
  const redis: ScriptedRedis = defineScripts(options.redis);
  return {
    async hold() {
      return ((await redis.sluiceLease(options.key, options.holder, options.ttlMs)) as number) === 1;
    },
  };
}
