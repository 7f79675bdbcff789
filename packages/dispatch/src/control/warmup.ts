import type { Redis } from 'ioredis';
import { systemClock, type Clock, type Keys, type PoolState, type SluiceConfig } from '@sluice/core';
import type { Adjustments, Signals } from '@sluice/throttle';

/** A warm-up decision, as the governor logs it (from and to are steps of the schedule). */
export interface WarmupDecision {
  pool: string;
  action: 'advance' | 'hold' | 'warm';
  from: number;
  to: number;
  /** The day judged: its counts and why it was held. */
  day: { attempted: number; accepted: number; bounced: number; complained: number; throttled: number; why?: string };
}

/** Options of {@link createWarmup}. */
export interface WarmupOptions {
  config: SluiceConfig;
  /** A connection of the caller's; not closed here. */
  redis: Redis;
  keys: Keys;
  adjustments: Adjustments;
  signals: Signals;
  /** Where "now" comes from when a day starts, a send is taken or a day's end is asked (tests step it). @defaultValue `systemClock` */
  clock?: Clock;
}

/** IP pool warm-up (docs/design/feedback-loop.md). */
export interface Warmup {
  /** Starts the first day of every warming pool that has none yet (any scheduler may). */
  start(): Promise<void>;
  /** A pool's state now: its config state, except that a warming pool is active once warm. */
  stateOf(pool: string): PoolState;
  /**
   * Takes one of today's sends of a warming pool to `receiver` (its bucket name): false
   * when the day's cap for it is spent (nothing taken then). Any other pool: true.
   */
  take(pool: string, receiver: string): Promise<boolean>;
  /** Gives back a send taken for a message that was not admitted after all. */
  giveBack(pool: string, receiver: string): Promise<void>;
  /** When a warming pool's current day ends (epoch ms): its caps are new then. */
  dayEndsAt(pool: string): number;
  /**
   * The governor leader's part, each tick: counts the signals of every warming pool into
   * its day, once per finished bucket, and judges each day that is over: the next step
   * after a healthy day (active after the last), the same step again otherwise.
   */
  tick(now: number): Promise<WarmupDecision[]>;
}

/** A warming pool's schedule (config `pools.<name>.warmup`). */
type WarmupSchedule = NonNullable<SluiceConfig['pools'][string]['warmup']>;

/** Signal buckets are read this long after they end: workers write them up to a second late. */
const SETTLE_MS = 2_000;

/** The day's counts, from the fields kept in `keys.warmup(pool)`. */
function dayOf(h: Record<string, string>): WarmupDecision['day'] {
  const n = (f: string): number => Number(h[f] ?? 0);
  return {
    attempted: n('attempted'),
    accepted: n('accepted'),
    bounced: n('bounced'),
    complained: n('complained'),
    throttled: n('throttled'),
  };
}

/** Why a day was not healthy enough to move the step on (`undefined`: it was). */
function whyHeld(day: WarmupDecision['day'], h: WarmupSchedule['healthy']): string | undefined {
  if (day.attempted < h.minVolume) return `${day.attempted} attempts, fewer than ${h.minVolume}`;
  if (day.bounced / day.attempted > h.bounceRate) return `bounces ${day.bounced}/${day.attempted} over ${h.bounceRate}`;
  if (day.complained / Math.max(1, day.accepted) > h.complaintRate)
    return `complaints ${day.complained}/${day.accepted} over ${h.complaintRate}`;
  if (day.throttled / day.attempted > h.throttleRate)
    return `throttles and blocks ${day.throttled}/${day.attempted} over ${h.throttleRate}`;
  return undefined;
}

/**
 * Creates the warm-up of the config's warming pools. A warming pool follows its schedule:
 * each step is a cap per receiver per day; a message over the cap goes to an active pool
 * of its route (the scheduler asks `take` first). The step advances only after a day whose
 * own signals were healthy: enough attempts, and bounces, complaints and receivers'
 * throttles and blocks under the limits of `warmup.healthy`.
 */
export function createWarmup(options: WarmupOptions): Warmup {
  const { config, redis, keys, adjustments, signals } = options;
  const clock = options.clock ?? systemClock;
  const warming = Object.entries(config.pools).flatMap(([name, p]) =>
    p.state === 'warming' && p.warmup ? [{ name, warmup: p.warmup }] : [],
  );
  const schedules = new Map(warming.map((p) => [p.name, p.warmup]));

  /** The pool's day, starting one when it has none (only the first caller's counts). */
  async function ensureDay(pool: string, now: number): Promise<void> {
    if (adjustments.warmup(pool) !== undefined) return;
    await adjustments.setWarmup(pool, { step: 0, dayStart: now, state: 'warming' }, { onlyIfAbsent: true });
  }

  function capOf(pool: string, receiver: string): number | undefined {
    const plan = schedules.get(pool);
    const state = adjustments.warmup(pool);
    if (!plan || state?.state === 'active') return undefined;
    const step = plan.schedule[Math.min(state?.step ?? 0, plan.schedule.length - 1)]!;
    return step[receiver] ?? step['*']!;
  }

  return {
    async start() {
      for (const p of warming) await ensureDay(p.name, clock());
    },
    stateOf(pool) {
      const configured = config.pools[pool]?.state ?? 'active';
      return configured === 'warming' && adjustments.warmup(pool)?.state === 'active' ? 'active' : configured;
    },
    async take(pool, receiver) {
      const cap = capOf(pool, receiver);
      if (cap === undefined) return true;
      await ensureDay(pool, clock());
      const { dayStart } = adjustments.warmup(pool)!;
      const key = keys.warmupSent(pool, dayStart);
      const [[, sent]] = (await redis
        .multi()
        .hincrby(key, receiver, 1)
        .pexpire(key, schedules.get(pool)!.dayMs * 2)
        .exec()) as [[unknown, number]];
      if (sent <= cap) return true;
      await redis.hincrby(key, receiver, -1);
      return false;
    },
    async giveBack(pool, receiver) {
      const state = adjustments.warmup(pool);
      if (capOf(pool, receiver) === undefined || !state) return;
      await redis.hincrby(keys.warmupSent(pool, state.dayStart), receiver, -1);
    },
    dayEndsAt(pool) {
      const state = adjustments.warmup(pool);
      return (state?.dayStart ?? clock()) + (schedules.get(pool)?.dayMs ?? 0);
    },
    async tick(now) {
      const decisions: WarmupDecision[] = [];
      for (const { name, warmup } of warming) {
        await ensureDay(name, now);
        const state = adjustments.warmup(name)!;
        if (state.state === 'active') continue;
        const dayEnd = state.dayStart + warmup.dayMs;
        const key = keys.warmup(name);
        // Count what finished since the last tick into the day, once per bucket.
        const kept = await redis.hgetall(key);
        const from = Number(kept.processedUntil ?? signals.bucketOf(state.dayStart));
        const until = Math.min(signals.bucketOf(now - SETTLE_MS), dayEnd);
        if (until > from) {
          const c = await signals.sum({ kind: 'pool', name }, from, until);
          const n = (f: string): number => c[f] ?? 0;
          await redis
            .multi()
            .hincrby(key, 'attempted', n('attempted'))
            .hincrby(key, 'accepted', n('accepted'))
            .hincrby(key, 'bounced', n('bounced_hard') + n('bounced_soft'))
            .hincrby(key, 'complained', n('complained'))
            // A receiver's throttles count under the pool as deferred:throttled (they are not
            // the pool's own limit), its blocks as rejected:policy_block: both say the IPs are cold.
            .hincrby(key, 'throttled', n('throttled') + n('deferred:throttled') + n('rejected:policy_block'))
            .hset(key, 'processedUntil', until)
            .exec();
        }
        if (now < dayEnd + SETTLE_MS) continue;

        const day = dayOf(await redis.hgetall(key));
        const why = whyHeld(day, warmup.healthy);
        const step = why === undefined ? state.step + 1 : state.step;
        const warm = step >= warmup.schedule.length;
        await redis.multi().del(key).hset(key, 'processedUntil', signals.bucketOf(now)).exec();
        await adjustments.setWarmup(name, {
          step: warm ? state.step : step,
          dayStart: now,
          state: warm ? 'active' : 'warming',
        });
        decisions.push({
          pool: name,
          action: warm ? 'warm' : why === undefined ? 'advance' : 'hold',
          from: state.step,
          to: step,
          day: why === undefined ? day : { ...day, why },
        });
      }
      return decisions;
    },
  };
}
