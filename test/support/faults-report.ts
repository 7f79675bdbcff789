// What a fault scenario or fuzzer found, for `pnpm faults`'s summary. The one place the
// fault suite reads the environment (lint allows process.env only in test/support/).
import { appendFileSync } from 'node:fs';

/**
 * The figures `pnpm faults` totals across scenarios (any other key is printed with its
 * scenario only). Counts are of messages unless named otherwise.
 */
export interface FaultFigures {
  /** Processes SIGKILLed (workers, schedulers, api, Redis). */
  kills?: number;
  /** Accepted messages with no final state at the end, or final but never at the ESP when they should be. */
  lost?: number;
  /** Messages the sandbox received more than once and that are flagged ambiguous on their record. */
  duplicatesFlagged?: number;
  /** Messages the sandbox received more than once with no ambiguity flagged: always a defect. */
  duplicatesUnflagged?: number;
  /** Messages not final when the scenario gave up waiting. */
  stuck?: number;
  /** Seconds from the fault's end to the first send after it. */
  recoverySeconds?: number;
  /** Messages that reached the sandbox while Redis was down. */
  arrivalsDuringOutage?: number;
  /** Generated inputs a fuzzer ran. */
  fuzzCases?: number;
  /** Refusals a fuzzer saw that were not a `SluiceError` naming the field (or an undocumented 5xx). */
  nonSluiceErrors?: number;
  [other: string]: number | string | undefined;
}

/** Records a scenario's figures (printed now, and totalled by `pnpm faults` at the end). */
export function reportFaults(scenario: string, figures: FaultFigures): void {
  const line = JSON.stringify({ scenario, ...figures });
  console.log(`faults: ${line}`);
  const file = process.env.SLUICE_FAULTS_REPORT;
  if (file) appendFileSync(file, `${line}\n`);
}

/**
 * The seed of this run's randomness: `SLUICE_FAULTS_SEED`, else a fresh one. Printed, so a
 * failing run can be replayed with `SLUICE_FAULTS_SEED=<seed> pnpm faults <scenario>`.
 */
export function faultsSeed(scenario: string): number {
  const given = process.env.SLUICE_FAULTS_SEED;
  const seed = given !== undefined && given !== '' ? Number(given) : Math.floor(Math.random() * 2 ** 31);
  if (!Number.isSafeInteger(seed)) throw new Error(`SLUICE_FAULTS_SEED must be an integer, got ${given}`);
  console.log(`faults: ${scenario} seed ${seed} (replay: SLUICE_FAULTS_SEED=${seed} pnpm faults ${scenario})`);
  return seed;
}

/** A small seeded generator (mulberry32): the same seed, the same kills at the same moments. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * A scenario's size from the environment variable `name` (a positive integer), else
 * `fallback`: what CI runs is the fallback, a longer run is asked for by name.
 */
export function faultsCount(name: string, fallback: number): number {
  const given = process.env[name];
  if (given === undefined || given === '') return fallback;
  const n = Number(given);
  if (!Number.isSafeInteger(n) || n < 1) throw new Error(`${name} must be a positive integer, got ${given}`);
  return n;
}
