import { SluiceError } from '@sluice/core';

/** One region's entry in an allocation round, as its last demand report gave it. */
export interface RegionDemand {
  /** The region's name, unique in the round. */
  name: string;
  /** Messages a second the region's ready mail asks of this budget (granted plus refused admissions). */
  demand: number;
  /**
   * The part of `demand` that is critical mail. Every region's critical demand is served before
   * any region's other mail, as critical mail comes first inside a region.
   * @defaultValue 0
   */
  critical?: number;
  /**
   * The least share the region is given, so a quiet region can start sending at once.
   * @defaultValue budget × `floorShare` / number of regions
   */
  floor?: number;
  /**
   * A region the coordinator has not heard from: its share stays at this rate (the most it may be
   * using: the highest share published to it since the round it last reported), outside fair
   * sharing and the step bound, and the others share what is left.
   */
  fixed?: number;
}

/** One rebalance round of a budget shared by regions. */
export interface AllocateOptions {
  /** The global budget in messages a second: a provider account's rate or a receiver's limit. */
  budget: number;
  /** Every region that shares the budget. A region left out is taken to send nothing. */
  regions: readonly RegionDemand[];
  /**
   * The shares published in the round before. Given, each share moves toward its fair target by
   * at most the step bound; a region missing from it is taken at its static share (budget / number
   * of regions: where a region starts). Omitted, the fair target itself is returned.
   */
  previous?: ReadonlyMap<string, number>;
  /**
   * The most the shares may fall in total in one round, as a share of the budget. It is the
   * fleet's bounded error: while one round's decreases have not reached every region, the shares
   * in force add up to at most budget × (1 + maxStepShare).
   * @defaultValue 0.1
   */
  maxStepShare?: number;
  /**
   * The share of the budget kept as floors, split evenly between the regions.
   * @defaultValue 0.1
   */
  floorShare?: number;
}

// Shares are published in thousandths of a message a second: a growing share is rounded down and a
// shrinking one up, so rounding neither adds up past the budget nor falls past the step bound.
const roundDown = (rate: number): number => Math.floor(rate * 1000 + 1e-6) / 1000;
const roundUp = (rate: number): number => Math.ceil(rate * 1000 - 1e-6) / 1000;

const total = (values: readonly number[]): number => values.reduce((a, b) => a + b, 0);

/** The values scaled down in proportion so they add up to at most `cap`. */
function capped(values: readonly number[], cap: number): number[] {
  const sum = total(values);
  return sum > cap && sum > 0 ? values.map((v) => (v * cap) / sum) : [...values];
}

/**
 * Water-filling: x[i] = clamp(level, lo[i], hi[i]) for the one level at which the x add up to
 * `capacity`; hi when even hi fits, lo scaled down when even lo does not.
 */
function fill(capacity: number, lo: readonly number[], hi: readonly number[]): number[] {
  if (total(hi) <= capacity) return [...hi];
  if (total(lo) >= capacity) return capped(lo, capacity);
  const at = (level: number): number => total(lo.map((l, i) => Math.min(hi[i]!, Math.max(l, level))));
  // The sum is linear in the level between two neighbouring bounds: find them, then interpolate.
  const points = [...lo, ...hi].sort((a, b) => a - b);
  let below = points[0]!;
  let above = points[points.length - 1]!;
  for (const p of points) {
    if (at(p) >= capacity) {
      above = p;
      break;
    }
    below = p;
  }
  const a = at(below);
  const b = at(above);
  const level = b === a ? above : below + ((capacity - a) * (above - below)) / (b - a);
  return lo.map((l, i) => Math.min(hi[i]!, Math.max(l, level)));
}

/**
 * The fair target: floors, then critical demand max-min fair, then the rest of the demand max-min
 * fair, then whatever no region asks for split evenly as headroom. Also returns the levels after
 * the critical pass, so a step funds critical growth before bulk growth.
 */
function fairTarget(room: number, regions: readonly RegionDemand[], floors: readonly number[]) {
  const wantCritical = regions.map((r, i) => Math.max(floors[i]!, Math.min(r.critical ?? 0, r.demand)));
  const critical = fill(room, floors, wantCritical);
  const served = fill(
    room,
    critical,
    regions.map((r, i) => Math.max(critical[i]!, r.demand)),
  );
  const spare = regions.length === 0 ? 0 : Math.max(0, room - total(served)) / regions.length;
  return { target: served.map((s) => s + spare), critical };
}

/**
 * One round's move from the previous shares toward the target: decreases scaled so they add up to
 * at most `maxDrop`, then what is free handed to the growing regions in tiers (floors, critical,
 * the rest), each tier in proportion to what it asks.
 */
function step(previous: readonly number[], tiers: readonly (readonly number[])[], room: number, maxDrop: number) {
  const target = tiers[tiers.length - 1]!;
  // A budget cut or a newly fixed region binds at once: the step bound cannot hold against it.
  const from = capped(previous, room);
  const drops = from.map((x, i) => Math.max(0, x - target[i]!));
  const dropped = total(drops);
  const scale = dropped > maxDrop ? maxDrop / dropped : 1;
  const next = from.map((x, i) => (drops[i]! > 0 ? Math.min(x, roundUp(x - drops[i]! * scale)) : x));
  const grown = next.map(() => 0);
  for (const tier of tiers) {
    const want = next.map((x, i) => Math.max(0, Math.min(target[i]!, tier[i]!) - x - grown[i]!));
    const free = Math.max(0, room - total(next) - total(grown));
    capped(want, free).forEach((g, i) => (grown[i] = grown[i]! + g));
  }
  return next.map((x, i) => (grown[i]! > 0 ? roundDown(x + grown[i]!) : x));
}

function check(options: AllocateOptions, maxStepShare: number, floorShare: number): void {
  const bad = (path: string, what: string): never => {
    throw new SluiceError('invalid_argument', `${path} ${what}`, { path });
  };
  const rate = (v: number | undefined): boolean => v === undefined || (Number.isFinite(v) && v >= 0);
  if (!rate(options.budget)) bad('budget', 'must be a finite rate ≥ 0');
  if (!(maxStepShare > 0 && maxStepShare <= 1)) bad('maxStepShare', 'must be in (0, 1]');
  if (!(floorShare >= 0 && floorShare <= 1)) bad('floorShare', 'must be in [0, 1]');
  const names = new Set<string>();
  options.regions.forEach((r, i) => {
    if (names.has(r.name)) bad(`regions.${i}.name`, `repeats ${r.name}`);
    names.add(r.name);
    for (const key of ['demand', 'critical', 'floor', 'fixed'] as const) {
      if (!rate(r[key])) bad(`regions.${i}.${key}`, 'must be a finite rate ≥ 0');
    }
  });
}

/**
 * Splits one global budget (a provider account's rate, a receiver organisation's limit) between
 * regions for one rebalance period, from each region's demand. Pure: the coordinator calls it
 * every period with the last demand reports and the shares it published the round before.
 *
 * Invariants, for every round (shares are in thousandths of a message a second):
 * - the shares add up to at most the budget;
 * - every region gets at least its floor (floors are scaled down only when fixed shares leave less
 *   than their sum), so with two regions or more no region's share is ever the whole budget;
 * - the target is max-min fair by demand: critical demand first, then the rest, and a region
 *   asking less than an even split gives the difference to the others; budget no region asks for
 *   is split evenly as headroom;
 * - with `previous`, the shares fall by at most budget × `maxStepShare` in total, so a region
 *   still enforcing the round before adds at most that much over the budget;
 * - with demand unchanged, the shares reach the target within ⌈D / (budget × maxStepShare)⌉
 *   rounds, D being what the shrinking regions give up in total: at most
 *   ⌈(1 − floorShare) / maxStepShare⌉ rounds (9 with the defaults).
 */
export function allocateBudget(options: AllocateOptions): Map<string, number> {
  const maxStepShare = options.maxStepShare ?? 0.1;
  const floorShare = options.floorShare ?? 0.1;
  check(options, maxStepShare, floorShare);
  const { budget, regions, previous } = options;
  const free = regions.filter((r) => r.fixed === undefined);
  const room = Math.max(0, budget - total(regions.map((r) => r.fixed ?? 0)));
  const floors = capped(
    free.map((r) => r.floor ?? (budget * floorShare) / regions.length),
    room,
  );
  const { target, critical } = fairTarget(room, free, floors);
  const shares =
    previous === undefined
      ? target.map(roundDown)
      : step(
          free.map((r) => previous.get(r.name) ?? budget / regions.length),
          [floors, critical, target],
          room,
          budget * maxStepShare,
        );
  const out = new Map<string, number>();
  for (const r of regions) if (r.fixed !== undefined) out.set(r.name, r.fixed);
  free.forEach((r, i) => out.set(r.name, shares[i]!));
  return out;
}

/** What a region knows of its share. */
export interface ShareInForceOptions {
  /** The share the region enforces now. */
  inForce: number;
  /** The share most recently heard from the coordinator. */
  heard: number;
  /** How long ago `heard` arrived (the region's own clock). */
  sinceHeardMs: number;
  /**
   * How long a higher share waits before it applies: at least the spread of the coordinator's
   * delivery delays between regions, and less than a rebalance period.
   */
  holdMs: number;
}

/**
 * The share a region enforces: a lower share applies as soon as it is heard, a higher one only
 * `holdMs` after. A region's increase is paid for by other regions' decreases of the same round;
 * holding it until every region has heard that round keeps the shares in force within the budget,
 * not merely within the step bound, whenever the delivery delays differ by at most `holdMs`.
 */
export function shareInForce(options: ShareInForceOptions): number {
  const { inForce, heard, sinceHeardMs, holdMs } = options;
  return heard <= inForce || sinceHeardMs >= holdMs ? heard : inForce;
}

/** A region that has not heard the coordinator for a while. */
export interface PartitionedShareOptions {
  /** The share in force when the region last heard the coordinator. */
  lastAllocation: number;
  /** The region's static share: budget / number of regions, or its configured weight of it. */
  staticShare: number;
  /** How long since the region last heard any allocation (the coordinator republishes every period). */
  sinceHeardMs: number;
  /** How long the last allocation is trusted: a few rebalance periods. */
  ttlMs: number;
  /**
   * How long the fall from the last allocation to the static share takes once `ttlMs` has passed.
   * @defaultValue ttlMs
   */
  decayMs?: number;
}

/**
 * The share a region uses while it cannot hear the coordinator: its last allocation until `ttlMs`,
 * then a linear fall over `decayMs` to min(last allocation, static share), where it stays.
 *
 * Invariants: never above the last allocation (the coordinator keeps an unheard region's share
 * fixed at least that high, so what the others are given still fits), so never the whole budget;
 * and once `ttlMs + decayMs` has passed, at most the static share, which every region and a standby
 * coordinator with no record can compute without talking: the static shares add up to the budget.
 */
export function partitionedShare(options: PartitionedShareOptions): number {
  const { lastAllocation, staticShare, sinceHeardMs, ttlMs } = options;
  if (sinceHeardMs <= ttlMs) return lastAllocation;
  const decayMs = options.decayMs ?? ttlMs;
  const gone = decayMs <= 0 ? 1 : Math.min(1, (sinceHeardMs - ttlMs) / decayMs);
  const settled = Math.min(lastAllocation, staticShare);
  return lastAllocation - (lastAllocation - settled) * gone;
}
