import type { Redis } from 'ioredis';
import { defineScripts, type ScriptedRedis } from './internal/scripts.js';

/** Options of {@link createSlots}. */
export interface SlotsOptions {
  /** A connection of the caller's; not closed by `close()`. */
  redis: Redis;
  /** The provider's slot set key (`keys.slots(provider)`). */
  key: string;
  /** Slots in all, across every process. */
  limit: number;
  /** This holder's unique name (process and instance). */
  holder: string;
  /** How many slots this holder wants. */
  want: number;
  /** A lease expires this long after its last renewal, so a dead holder's slots come back. @defaultValue `10_000` */
  leaseMs?: number;
  /** Called whenever the number of slots held changes. */
  onChange?: (held: number) => void;
}

/** Connection slots held by one process: a share of a fleet-wide semaphore. */
export interface Slots {
  /** Slots held now. */
  readonly held: number;
  /** Takes, renews and tops up leases once; runs on a timer after `start()`. */
  refresh(): Promise<number>;
  /** Starts renewing every `leaseMs / 3`. */
  start(): Promise<void>;
  /** Stops renewing and gives every lease back. */
  close(): Promise<void>;
}

/**
 * A sorted-set semaphore whose leases expire if their holder dies, taken per connection
 * (a worker holds `want` of them for as long as it runs), not per message.
 */
export function createSlots(options: SlotsOptions): Slots {
  const redis: ScriptedRedis = defineScripts(options.redis);
  const leaseMs = options.leaseMs ?? 10_000;
  const ids = Array.from({ length: options.want }, (_, i) => `${options.holder}#${i}`);
  const mine = new Set<string>();
  let timer: NodeJS.Timeout | undefined;
  let closed = false;

  async function refresh(): Promise<number> {
    const before = mine.size;
    for (const id of ids) {
      const [held] = (await redis.sluiceSlotAcquire(options.key, options.limit, leaseMs, id)) as [number, number];
      if (held === 1) mine.add(id);
      else mine.delete(id);
    }
    if (mine.size !== before) options.onChange?.(mine.size);
    return mine.size;
  }

  return {
    get held() {
      return mine.size;
    },
    refresh,
    async start() {
      await refresh();
      const tick = (): void => {
        timer = setTimeout(() => {
          refresh()
            .catch(() => {
              // Redis unreachable: we cannot renew, so we hold nothing (fail closed).
              if (mine.size > 0) {
                mine.clear();
                options.onChange?.(0);
              }
            })
            .finally(() => {
              if (!closed) tick();
            });
        }, Math.max(50, Math.floor(leaseMs / 3)));
        timer.unref();
      };
      tick();
    },
    async close() {
      closed = true;
      if (timer) clearTimeout(timer);
      if (mine.size > 0) await redis.sluiceSlotRelease(options.key, ...mine);
      mine.clear();
    },
  };
}
