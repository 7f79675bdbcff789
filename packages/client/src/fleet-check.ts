import type { Redis } from 'ioredis';
import { SCHEMA_VERSION, SLUICE_VERSION, SluiceError, type Keys } from '@sluice/core';
import { ALIVE_MS, BEAT_MS, noteUnscheduled, readFleet, type FleetView } from '@sluice/store';

/**
 * What the client does when its first call finds no fleet under its prefix, or one of another
 * store schema: `error` refuses the call (`no_fleet`, `fleet_incompatible`); `warn` reports it
 * through `onWarning` and accepts the mail (it waits until a fleet of its schema runs); `off`
 * does not look.
 */
export type FleetCheck = 'error' | 'warn' | 'off';

/** The client's view of its fleet: checked once, then kept fresh enough to count unscheduled mail. */
export interface FleetWatch {
  /** Before the first write: the fleet must be there (by `mode`). Resolves at once after a success. */
  ensure(): Promise<void>;
  /** `n` messages were accepted: counted (and warned of once) while no scheduler runs. */
  accepted(n: number): void;
  /** The fleet as its heartbeats tell now. */
  read(): Promise<FleetView>;
}

/** The problem with `view` for a client of this release, if any. */
function problemOf(view: FleetView, prefix: string, where: string): SluiceError | undefined {
  if (view.processes.length === 0) {
    return new SluiceError(
      'no_fleet',
      `no Sluice fleet under prefix "${prefix}" at ${where}: no scheduler or worker has beaten in the last ` +
        `${ALIVE_MS / 1000} s. Check that this client's prefix is the fleet's redis.prefix and that the fleet runs ` +
        `(fleetCheck: 'warn' accepts mail anyway; it waits until a fleet starts)`,
      { action: 'transient' },
    );
  }
  if (!view.schemas.includes(SCHEMA_VERSION)) {
    const releases = [...new Set(view.processes.map((p) => p.version))].join(', ');
    return new SluiceError(
      'fleet_incompatible',
      `the fleet under prefix "${prefix}" at ${where} speaks store schema ${view.schemas.join(', ')} ` +
        `(Sluice ${releases}); this client (Sluice ${SLUICE_VERSION}) speaks schema ${SCHEMA_VERSION}: ` +
        `use the client of the fleet's release (CHANGELOG.md)`,
    );
  }
  return undefined;
}

/** Where a client's Redis is, for its errors (never a password). */
export function redisWhere(redis: Redis): string {
  const o = redis.options;
  return o.path ? o.path : `${o.host ?? '127.0.0.1'}:${o.port ?? 6379}`;
}

/** Watches the fleet under `keys` for one client. */
export function createFleetWatch(deps: {
  redis: Redis;
  keys: Keys;
  mode: FleetCheck;
  onWarning: (warning: SluiceError) => void;
}): FleetWatch {
  const { redis, keys, mode, onWarning } = deps;
  const where = redisWhere(redis);
  let verified = mode === 'off';
  let view: { at: number; schedulers: number } | undefined;
  let refreshing: Promise<unknown> | undefined;
  let warnedUnscheduled = false;

  async function read(): Promise<FleetView> {
    const fleet = await readFleet(redis, keys);
    view = { at: Date.now(), schedulers: fleet.alive.scheduler };
    if (fleet.alive.scheduler > 0) warnedUnscheduled = false;
    return fleet;
  }

  return {
    read,
    async ensure() {
      if (verified) return;
      const problem = problemOf(await read(), keys.prefix, where);
      if (problem && mode === 'error') throw problem;
      if (problem) onWarning(problem);
      verified = true;
    },
    accepted(n) {
      if (mode === 'off' || n === 0) return;
      // Fresh enough without a read per send: a stale view is refreshed behind the send.
      if ((!view || Date.now() - view.at > BEAT_MS) && !refreshing) {
        refreshing = read()
          .catch(() => undefined)
          .finally(() => (refreshing = undefined));
      }
      if (!view || view.schedulers > 0) return;
      void noteUnscheduled(redis, keys, n).catch(() => undefined);
      if (warnedUnscheduled) return;
      warnedUnscheduled = true;
      onWarning(
        new SluiceError(
          'no_scheduler',
          `messages accepted under prefix "${keys.prefix}" at ${where} while no scheduler runs: they wait until one ` +
            `starts (counted in sluice status)`,
          { action: 'transient' },
        ),
      );
    },
  };
}
