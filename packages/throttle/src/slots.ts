import type { Redis } from 'ioredis';
import { defineScripts, type ScriptedRedis } from './internal/scripts.js';

/** Options of {@link createSlots}. */
export interface SlotsOptions {
  /** A connection of the caller's; not closed by `close()`. */
  redis: Redis;
  /** The provider's slot set key (`keys.slots(provider)`). */
  key: string;
  /** The provider's holders key (`keys.slotHolders(provider)`). */
  holdersKey: string;
  /** Slots in all, across every process. */
  limit: number;
  /** This holder's unique name (process and instance). */
  holder: string;
  /** How many slots this holder wants; it gets at most `ceil(limit / live holders)`. */
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
  /** Takes, renews, tops up or gives back leases once; runs on a timer after `start()`. */
  refresh(): Promise<number>;
  /** Takes the first leases and renews every `leaseMs / 3`. */
  start(): Promise<void>;
  /** Stops renewing and gives every lease back. */
  close(): Promise<void>;
}

/**
 * A sorted-set semaphore whose leases expire if their holder dies, taken per connection
 * (a worker holds its share for as long as it runs), not per message.
 */
export function createSlots(options: SlotsOptions): Slots {
  const redis: ScriptedRedis = defineScripts(options.redis);
  const leaseMs = options.leaseMs ?? 10_000;
  let held = 0;
  let timer: NodeJS.Timeout | undefined;
  let closed = false;

  const set = (n: number): void => {
    if (n === held) return;
    held = n;
    options.onChange?.(n);
  };

  async function refresh(): Promise<number> {
    const n = (await redis.sluiceSlotAcquire(
      options.key,
      options.holdersKey,
      options.limit,
      leaseMs,
      options.holder,
      options.want,
    )) as number;
    if (!closed) set(n);
    return n;
  }

  return {
    get held() {
      return held;
    },
    refresh,
    async start() {
      await refresh();
      const tick = (): void => {
        timer = setTimeout(
          () => {
            refresh()
              // Redis unreachable: we cannot renew, so we hold nothing (fail closed).
              .catch(() => set(0))
              .finally(() => {
                if (!closed) tick();
              });
          },
          Math.max(50, Math.floor(leaseMs / 3)),
        );
        timer.unref();
      };
      tick();
    },
    async close() {
      closed = true;
      if (timer) clearTimeout(timer);
      set(0);
      await redis.sluiceSlotRelease(options.key, options.holdersKey, options.holder, options.want);
    },
  };
}
