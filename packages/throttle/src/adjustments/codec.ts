import type { LayerKind } from '@sluice/core';

// The wire format of the adjustments hash (`keys.adjustments()`, `{prefix:rl}:adjust`): one
// field per fact, `<family prefix><name>`, its value a short comma-separated text (JSON for
// overrides). Stored data outlives deployments: a change here needs a migration, and
// decoding stays tolerant of the older, shorter values that are still in the hash.
// Two Lua scripts know parts of it too: slow-down-1.lua reads and writes `slow:` fields,
// override-remove-2.lua reads `ovr:` JSON.

/** How backpressure lowered a layer key (`slow:<layerKey>`, written by `slow-down-1.lua` as `factor,until,lastCut`). */
export interface SlowState {
  /** The share of its rate the key runs at until `untilMs`. */
  factor: number;
  /** When the hold ends (epoch ms, Redis time); the rate doubles every `holdMs` from then on. */
  untilMs: number;
  /** When the rate was last cut (epoch ms, Redis time). */
  lastCut: number;
}

/** The governor's setting of a layer key (`gov:<layerKey>`; see `Adjustments.governed`). */
export interface Governed {
  factor: number;
  /** The last decision on the key (epoch ms), its rule (`recovery` for a step back up) and the factor before it. */
  decidedAt: number;
  rule: string;
  from: number;
  /**
   * The last cut (epoch ms), the factor it set, its rule and the factor it cut from (where
   * the trouble was): recovery climbs from there.
   */
  cutAt: number;
  cutFactor: number;
  cutRule: string;
  cutFrom: number;
}

/** A circuit that is not closed (`circuit:<id>`): open until `untilMs`, then letting `probes` through per `openForMs` (half-open). */
export interface CircuitState {
  untilMs: number;
  openForMs: number;
  probes: number;
  rule: string;
}

/** A campaign the governor paused (`govpause:<campaignId>`): until when, by which rule. */
export interface CampaignPause {
  untilMs: number;
  rule: string;
}

/** A warming pool's progress (`warm:<pool>`; see `Adjustments.warmup`). */
export interface WarmupState {
  /** Index into the pool's `warmup.schedule`. */
  step: number;
  /** When the current day began (epoch ms); it ends `dayMs` later. */
  dayStart: number;
  state: 'warming' | 'active';
}

/**
 * What an operator override does to its key: `pause` admits nothing new through it,
 * `suspend` also stops admitted mail at the workers, `rate` replaces its configured rate.
 */
export type OverrideKind = 'pause' | 'suspend' | 'rate';

/**
 * An operator override as the adjustments hash keeps it (field `ovr:<layerKey>`, JSON).
 * Written by `@sluice/ops` (whose `Override` is this shape); read here because every
 * scheduler and worker already reads the hash.
 */
export interface OverrideState {
  scope: LayerKind;
  name: string;
  kind: OverrideKind;
  /** Messages per second, for `kind: 'rate'`. */
  rate?: number;
  /** When it ends by itself (epoch ms): readers treat it as absent from then on. */
  untilMs: number;
  actor: string;
  reason: string;
  setAt: number;
}

/** A provider paused (`pause:<provider>`) or marked down (`down:<provider>`) until `untilMs` (epoch ms). */
export interface ProviderHold {
  untilMs: number;
  /** At most 200 characters are kept. */
  reason: string;
}

/** `number,text`: the text may hold commas; no comma reads as an empty text. */
function pair(raw: string): [number, string] {
  const comma = raw.indexOf(',');
  return [Number(comma < 0 ? raw : raw.slice(0, comma)), comma < 0 ? '' : raw.slice(comma + 1)];
}

function decodeGoverned(raw: string): Governed {
  // Older values end after `from` (or `rule`): their last decision was their cut.
  const [factor, decidedAt, rule, from, cutAt, cutFactor, cutRule, cutFrom] = raw.split(',');
  return {
    factor: Number(factor),
    decidedAt: Number(decidedAt),
    rule: rule ?? '',
    from: from === undefined ? 1 : Number(from),
    cutAt: cutAt === undefined ? Number(decidedAt) : Number(cutAt),
    cutFactor: cutFactor === undefined ? Number(factor) : Number(cutFactor),
    cutRule: cutRule ?? rule ?? '',
    cutFrom: cutFrom === undefined ? (from === undefined ? 1 : Number(from)) : Number(cutFrom),
  };
}

function decodeOverride(raw: string): OverrideState | undefined {
  try {
    const o = JSON.parse(raw) as OverrideState;
    return typeof o.untilMs === 'number' && typeof o.kind === 'string' ? o : undefined;
  } catch {
    return undefined; // a field nobody can read holds nothing
  }
}

const providerHold = {
  decode: (raw: string): ProviderHold => {
    const [untilMs, reason] = pair(raw);
    return { untilMs, reason };
  },
  encode: (h: ProviderHold): string => `${h.untilMs},${h.reason.slice(0, 200)}`,
};

/** Every family of the hash: its field prefix and how its values are written and read. */
const FAMILIES = {
  /** Backpressure's cut of a layer key. The script writes `%.6f,%d,%d`; `encode` is for a process's own copy. */
  slow: {
    prefix: 'slow:',
    decode: (raw: string): SlowState => {
      const [factor, untilMs, lastCut] = raw.split(',');
      return { factor: Number(factor), untilMs: Number(untilMs), lastCut: Number(lastCut) };
    },
    encode: (s: SlowState): string => `${s.factor},${s.untilMs},${s.lastCut}`,
  },
  /** The governor's factor of a layer key: `factor,decidedAt,rule,from,cutAt,cutFactor,cutRule,cutFrom`. */
  governed: {
    prefix: 'gov:',
    decode: decodeGoverned,
    encode: (g: Governed): string =>
      `${g.factor.toFixed(4)},${g.decidedAt},${g.rule},${g.from.toFixed(4)},` +
      `${g.cutAt},${g.cutFactor.toFixed(4)},${g.cutRule},${g.cutFrom.toFixed(4)}`,
  },
  /** A circuit not closed (`<receiver>|<pool>|<stream>`): `untilMs,openForMs,probes,rule`. */
  circuit: {
    prefix: 'circuit:',
    decode: (raw: string): CircuitState => {
      const [untilMs, openForMs, probes, rule] = raw.split(',');
      return { untilMs: Number(untilMs), openForMs: Number(openForMs), probes: Number(probes), rule: rule ?? '' };
    },
    encode: (c: CircuitState): string => `${c.untilMs},${c.openForMs},${c.probes},${c.rule}`,
  },
  /** When a circuit last closed (epoch ms). */
  circuitClosed: { prefix: 'circuitclosed:', decode: Number, encode: String },
  /** The governor's pause of a campaign: `untilMs,rule`. */
  campaignPause: {
    prefix: 'govpause:',
    decode: (raw: string): CampaignPause => {
      const [untilMs, rule] = pair(raw);
      return { untilMs, rule };
    },
    encode: (p: CampaignPause): string => `${p.untilMs},${p.rule}`,
  },
  /** A warming pool's progress: `step,dayStart,state`. */
  warmup: {
    prefix: 'warm:',
    decode: (raw: string): WarmupState => {
      const [step, dayStart, state] = raw.split(',');
      return { step: Number(step), dayStart: Number(dayStart), state: state === 'active' ? 'active' : 'warming' };
    },
    encode: (w: WarmupState): string => `${w.step},${w.dayStart},${w.state}`,
  },
  /** An operator override of a layer key: JSON; unreadable JSON is no override. */
  override: { prefix: 'ovr:', decode: decodeOverride, encode: (o: OverrideState): string => JSON.stringify(o) },
  /** A recipient receiving faster than its mailbox takes (by a hash of its address): until when its mail waits. */
  recipientHold: { prefix: 'rcpt:', decode: Number, encode: String },
  /** A provider's rate cap from its account limits (SES `MaxSendRate`). */
  cap: { prefix: 'cap:', decode: Number, encode: String },
  /** A provider paused (out of quota): `untilMs,reason`. */
  pause: { prefix: 'pause:', ...providerHold },
  /** A provider down (failing without answers): `untilMs,reason`. */
  down: { prefix: 'down:', ...providerHold },
} satisfies Record<string, { prefix: string; decode: (raw: string) => unknown; encode: (value: never) => string }>;

/** A family of facts in the adjustments hash. */
export type AdjustmentFamily = keyof typeof FAMILIES;

/** What a family's field holds, decoded. */
export type AdjustmentValue<F extends AdjustmentFamily> = NonNullable<ReturnType<(typeof FAMILIES)[F]['decode']>>;

/** The fields of the adjustments hash as `HGETALL` returns them. */
export type AdjustmentFields = Readonly<Record<string, string>>;

/** The hash field of `name` (a layer key, circuit id, campaign id, pool or provider) in `family`. */
export function adjustmentField(family: AdjustmentFamily, name: string): string {
  return FAMILIES[family].prefix + name;
}

/** The adjustments-hash field of a layer key's override. */
export const overrideField = (layerKey: string): string => adjustmentField('override', layerKey);

/** A field's value as it is stored. */
export function encodeAdjustment<F extends AdjustmentFamily>(family: F, value: AdjustmentValue<F>): string {
  return (FAMILIES[family].encode as (v: AdjustmentValue<F>) => string)(value);
}

/** A stored value, decoded; `undefined` when it cannot be read (only overrides: bad JSON). */
export function decodeAdjustment<F extends AdjustmentFamily>(family: F, raw: string): AdjustmentValue<F> | undefined {
  return (FAMILIES[family].decode as (raw: string) => AdjustmentValue<F> | undefined)(raw);
}

/** The decoded value of `name` in `family`, if the hash has one. */
export function readAdjustment<F extends AdjustmentFamily>(
  fields: AdjustmentFields,
  family: F,
  name: string,
): AdjustmentValue<F> | undefined {
  const raw = fields[adjustmentField(family, name)];
  return raw === undefined ? undefined : decodeAdjustment(family, raw);
}

/** The names the hash holds a field of `family` for (undecodable ones included). */
export function adjustmentNames(fields: AdjustmentFields, family: AdjustmentFamily): string[] {
  const { prefix } = FAMILIES[family];
  return Object.keys(fields)
    .filter((f) => f.startsWith(prefix))
    .map((f) => f.slice(prefix.length));
}

/** Every decodable value of `family` in the hash, with its name. */
export function adjustmentEntries<F extends AdjustmentFamily>(
  fields: AdjustmentFields,
  family: F,
): [name: string, value: AdjustmentValue<F>][] {
  const out: [string, AdjustmentValue<F>][] = [];
  for (const name of adjustmentNames(fields, family)) {
    const value = readAdjustment(fields, family, name);
    if (value !== undefined) out.push([name, value]);
  }
  return out;
}
