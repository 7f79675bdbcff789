import { LAYER_KINDS, type LayerKind } from '@sluice/core';
import type { AdmitRequest, AdmitResult, ArriveRequest, ArriveResult, LayerLimit, Limiter } from './limiter.js';

/** Options of {@link withLocalShare}. */
export interface LocalShareOptions {
  /** The shared limiter, on the limiter Redis. */
  limiter: Limiter;
  /**
   * The fraction of every layer's critical reserve this process may use on its own while the
   * limiter Redis does not answer. 0: none (fail closed: nothing goes until it is back).
   */
  share: number;
  /** `reserves.critical`: the share of every layer's rate kept for critical mail. */
  reserveCritical: number;
  /** A critical call unanswered this long counts the limiter Redis away. */
  afterMs: number;
  /** Resolves once the limiter Redis answers (a PING on its connection). */
  probe: () => Promise<unknown>;
  /** Told when the limiter Redis is found away (`true`) and when it answers again (`false`). */
  onChange?: (away: boolean, downMs: number) => void;
  /** @defaultValue `Date.now` */
  clock?: () => number;
}

/** A limiter that goes on for critical mail, within a local share, while the shared one is away. */
export interface LocalShareLimiter extends Limiter {
  /** Whether the limiter Redis counts as away now. */
  readonly away: boolean;
  /** Decisions and places this process answered alone while it was away. */
  readonly localAnswers: number;
}

/**
 * One process's local buckets (GCRA: a theoretical arrival time per bucket key), each at
 * `share × reserveCritical` of its layer's rate and burst. Pure: time comes in as `now`.
 */
export interface LocalBuckets {
  /**
   * The earliest slot, no sooner than `now`, every limited layer has room for, `waitMs` from
   * now: charged (each layer's next slot moves on by one interval) only if it is within
   * `aheadMs`; past it, nothing is charged and `layer` names the busiest.
   */
  take(
    layers: readonly LayerLimit[],
    now: number,
    aheadMs: number,
  ): { taken: boolean; waitMs: number; layer: LayerKind };
}

/** Creates the local buckets of one gate at `fraction` of each layer's rate and burst. */
export function createLocalBuckets(fraction: number): LocalBuckets {
  const tat = new Map<string, number>();
  return {
    take(layers, now, aheadMs) {
      let at = now;
      let worst: LayerKind = LAYER_KINDS[0];
      const limited: { key: string; intervalMs: number }[] = [];
      layers.forEach((layer, i) => {
        if (layer.rate === undefined || !(layer.rate > 0)) return;
        const rate = layer.rate * fraction;
        const intervalMs = 1000 / rate;
        // A burst of its own share, at least one: what the layer may take at once.
        const burst = Math.max(1, Math.floor((layer.burst ?? Math.max(1, Math.round(layer.rate / 10))) * fraction));
        const earliest = Math.max(now, (tat.get(layer.key) ?? now) - (burst - 1) * intervalMs);
        if (earliest > at) {
          at = earliest;
          worst = LAYER_KINDS[i]!;
        }
        limited.push({ key: layer.key, intervalMs });
      });
      const waitMs = Math.ceil(at - now);
      if (waitMs > aheadMs) return { taken: false, waitMs, layer: worst };
      for (const { key, intervalMs } of limited) tat.set(key, Math.max(tat.get(key) ?? now, at) + intervalMs);
      return { taken: true, waitMs, layer: worst };
    },
  };
}

/**
 * Wraps the shared limiter for the one exception to fail closed (docs/design/state-and-owners.md,
 * "The limiter Redis away"): a critical call the limiter Redis leaves unanswered for
 * `afterMs` counts it away, and until a PING comes back critical mail is decided here, on
 * local buckets at `share` of each layer's critical reserve (admission and the arrival gate
 * each keep their own). Every other class waits for the shared limiter, as without the share.
 * A call that answers late is dropped: what it charged is room lost, never a send over.
 * With `share` 0 the shared limiter is returned as it is.
 */
export function withLocalShare(options: LocalShareOptions): LocalShareLimiter {
  const { limiter, afterMs, probe, onChange } = options;
  const clock = options.clock ?? Date.now;
  const fraction = options.share * options.reserveCritical;
  const admissions = createLocalBuckets(fraction);
  const arrivals = createLocalBuckets(fraction);
  let awaySince: number | undefined;
  let probing = false;
  let localAnswers = 0;

  function goneAway(): void {
    if (awaySince !== undefined) return;
    awaySince = clock();
    onChange?.(true, 0);
    watchForReturn();
  }
  function watchForReturn(): void {
    if (probing) return;
    probing = true;
    probe().then(
      () => {
        probing = false;
        const since = awaySince;
        awaySince = undefined;
        if (since !== undefined) onChange?.(false, clock() - since);
      },
      // An error is no answer: ask again shortly.
      () => setTimeout(() => ((probing = false), watchForReturn()), Math.min(afterMs, 250)).unref(),
    );
  }

  /** The shared answer if it comes within `afterMs`, else `undefined` (and the Redis is away). */
  async function shared<T>(call: () => Promise<T>): Promise<T | undefined> {
    if (awaySince !== undefined) return undefined;
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<undefined>((resolve) => {
      timer = setTimeout(() => resolve(undefined), afterMs);
    });
    const answer = call();
    // Once dropped, its late failure is nobody's.
    answer.catch(() => undefined);
    try {
      const first = await Promise.race([answer, late]);
      if (first === undefined) goneAway();
      return first;
    } finally {
      clearTimeout(timer);
    }
  }

  if (!(fraction > 0)) {
    return {
      get calls() {
        return limiter.calls;
      },
      away: false,
      localAnswers: 0,
      admit: (request) => limiter.admit(request),
      arrive: (request) => limiter.arrive(request),
      arriveBatch: (request) => limiter.arriveBatch(request),
    };
  }

  return {
    get calls() {
      return limiter.calls;
    },
    get away() {
      return awaySince !== undefined;
    },
    get localAnswers() {
      return localAnswers;
    },
    async admit(request: AdmitRequest): Promise<AdmitResult> {
      if (request.priority !== 'critical') return limiter.admit(request);
      const answer = await shared(() => limiter.admit(request));
      if (answer !== undefined) return answer;
      localAnswers++;
      const { taken, waitMs, layer } = admissions.take(request.layers, clock(), request.horizonMs);
      if (!taken) return { outcome: 'denied', waitMs, layer };
      return waitMs > 0 ? { outcome: 'booked', waitMs, layer } : { outcome: 'granted' };
    },
    // Batches are campaign mail, never critical: never on the local share.
    arriveBatch: (request) => limiter.arriveBatch(request),
    async arrive(request: ArriveRequest): Promise<ArriveResult> {
      if (request.priority !== 'critical') return limiter.arrive(request);
      const answer = await shared(() => limiter.arrive(request));
      if (answer !== undefined) return answer;
      localAnswers++;
      const { taken, waitMs, layer } = arrivals.take(request.layers, clock(), request.aheadMs);
      return taken ? { outcome: 'placed', waitMs } : { outcome: 'beyond', waitMs, layer };
    },
  };
}
