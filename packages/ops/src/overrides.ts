import type { Redis } from 'ioredis';
import { LAYER_KINDS, SluiceError, type Keys, type LayerKind, type SluiceConfig } from '@sluice/core';
import { adjustmentEntries, encodeAdjustment, overrideField, removeOverride, sweepOverrides } from '@sluice/throttle';
import type { AuditEntry, Override, OverrideKind } from './types.js';

/** The furthest ahead an override may end: a forgotten one must not outlive a week. */
export const OVERRIDE_MAX_MS = 7 * 86_400_000;

const KINDS: readonly OverrideKind[] = ['pause', 'suspend', 'rate'];
/** The audit stream is capped near this many entries (as the script that clears them). */
const AUDIT_MAXLEN = 100_000;

/** Options of {@link createOverrides}. */
export interface OverridesOptions {
  config: SluiceConfig;
  /** A connection of the caller's; not closed here. */
  redis: Redis;
  keys: Keys;
}

/** What {@link Overrides.set} takes. Exactly one of `forMs` and `untilMs`: an override always ends. */
export interface SetOverrideInput {
  scope: LayerKind;
  /** The key within the scope: a provider id, receiver name, pool, campaign id or tenant. */
  name: string;
  kind: OverrideKind;
  /** Messages per second; required for `kind: 'rate'`, refused otherwise. */
  rate?: number | undefined;
  /** How long it lasts from now (ms), at most 7 days. */
  forMs?: number | undefined;
  /** When it ends (epoch ms), in the future and at most 7 days ahead. */
  untilMs?: number | undefined;
  /** Who sets it. */
  actor: string;
  /** Why: kept in the audit trail. */
  reason: string;
}

/**
 * Operator overrides of quota keys: set, cleared and expired with an audit trail. They live
 * in the adjustments hash every scheduler and worker already reads (field `ovr:<layerKey>`),
 * so they bind everywhere within a refresh (250 ms), and they end by themselves.
 */
export interface Overrides {
  /** Sets (or replaces) a key's override. Bad input throws `invalid_argument` naming the field, and writes nothing. */
  set(input: SetOverrideInput): Promise<Override>;
  /** Ends a key's override now; `false` if there was none in force (then nothing is written). */
  clear(scope: LayerKind, name: string, actor: string, reason: string): Promise<boolean>;
  /** The overrides in force (an expired one is not, even before the sweep removed it), soonest end first. */
  list(): Promise<Override[]>;
  /** The audit trail, newest first. @defaultValue `count` 100 */
  audit(count?: number): Promise<AuditEntry[]>;
  /**
   * Removes the overrides whose time is up, each with one `expire` entry (actor `sluice`),
   * however many sweepers race. The governor's leader calls it every tick.
   */
  sweep(now?: number): Promise<Override[]>;
}

const text = (v: unknown): v is string => typeof v === 'string' && v.trim() !== '';

function invalid(path: string, message: string): SluiceError {
  return new SluiceError('invalid_argument', `override ${path}: ${message}`, { path });
}

/** Checks an override before anything is written; returns it as stored. */
function validate(config: SluiceConfig, input: SetOverrideInput, now: number): Override {
  if (!(LAYER_KINDS as readonly string[]).includes(input.scope))
    throw invalid('scope', `must be one of ${LAYER_KINDS.join(', ')}`);
  if (!text(input.name)) throw invalid('name', 'is required');
  if (/\s/.test(input.name) || input.name.length > 200)
    throw invalid('name', 'must be a key name: no spaces, at most 200 characters');
  // A key nobody sends through would hold nothing: a typo must not look like a pause.
  if (input.scope === 'provider' && !(input.name in config.providers))
    throw invalid('name', `names no configured provider (${Object.keys(config.providers).join(', ')})`);
  if (input.scope === 'pool' && !(input.name in config.pools))
    throw invalid('name', `names no configured pool (${Object.keys(config.pools).join(', ')})`);
  if (!KINDS.includes(input.kind)) throw invalid('kind', `must be one of ${KINDS.join(', ')}`);
  if (input.kind === 'rate') {
    if (typeof input.rate !== 'number' || !Number.isFinite(input.rate) || input.rate <= 0)
      throw invalid('rate', 'must be a number of messages per second above 0');
  } else if (input.rate !== undefined) throw invalid('rate', `is only for kind 'rate'`);
  if (input.forMs === undefined && input.untilMs === undefined)
    throw invalid('untilMs', 'an override must end by itself: give forMs or untilMs');
  if (input.forMs !== undefined && input.untilMs !== undefined)
    throw invalid('forMs', 'give forMs or untilMs, not both');
  if (input.forMs !== undefined && (!Number.isFinite(input.forMs) || input.forMs <= 0))
    throw invalid('forMs', 'must be a positive number of ms');
  if (input.untilMs !== undefined && (!Number.isFinite(input.untilMs) || input.untilMs <= now))
    throw invalid('untilMs', 'must be in the future');
  const untilMs = Math.round(input.untilMs ?? now + input.forMs!);
  if (untilMs - now > OVERRIDE_MAX_MS)
    throw invalid(input.forMs !== undefined ? 'forMs' : 'untilMs', 'must end within 7 days');
  if (!text(input.actor)) throw invalid('actor', 'is required: who sets it');
  if (input.actor.length > 64) throw invalid('actor', 'at most 64 characters');
  if (!text(input.reason)) throw invalid('reason', 'is required: why it is set');
  if (input.reason.length > 500) throw invalid('reason', 'at most 500 characters');
  return {
    scope: input.scope,
    name: input.name,
    kind: input.kind,
    ...(input.kind === 'rate' ? { rate: input.rate! } : {}),
    untilMs,
    actor: input.actor.trim(),
    reason: input.reason.trim(),
    setAt: now,
  };
}

function entryOf(id: string, flat: string[]): AuditEntry {
  const f: Record<string, string> = {};
  for (let i = 0; i + 1 < flat.length; i += 2) f[flat[i]!] = flat[i + 1]!;
  return {
    id,
    at: Number(f.at),
    action: f.action as AuditEntry['action'],
    scope: f.scope as LayerKind,
    name: f.name ?? '',
    kind: f.kind as OverrideKind,
    ...(f.rate !== undefined ? { rate: Number(f.rate) } : {}),
    ...(f.untilMs !== undefined ? { untilMs: Number(f.untilMs) } : {}),
    actor: f.actor ?? '',
    reason: f.reason ?? '',
  };
}

/** Creates the overrides of one deployment. */
export function createOverrides(options: OverridesOptions): Overrides {
  const { config, redis, keys } = options;
  const hash = keys.adjustments();
  const layerKey = (scope: LayerKind, name: string): string => keys.bucket(scope, name);

  return {
    async set(input) {
      const now = Date.now();
      const o = validate(config, input, now);
      const entry = [
        'action',
        'set',
        'at',
        String(now),
        'scope',
        o.scope,
        'name',
        o.name,
        'kind',
        o.kind,
        'untilMs',
        String(o.untilMs),
        'actor',
        o.actor,
        'reason',
        o.reason,
      ];
      if (o.rate !== undefined) entry.push('rate', String(o.rate));
      // The override and its audit entry together, or neither (both keys share the limiter's hash tag).
      const replies = await redis
        .multi()
        .hset(hash, overrideField(layerKey(o.scope, o.name)), encodeAdjustment('override', o))
        .xadd(keys.audit(), 'MAXLEN', '~', AUDIT_MAXLEN, '*', ...entry)
        .exec();
      const failed = replies?.find(([err]) => err !== null)?.[0];
      if (replies === null || failed) throw failed ?? new Error('override not written: transaction aborted');
      return o;
    },

    async clear(scope, name, actor, reason) {
      if (!text(actor)) throw invalid('actor', 'is required: who clears it');
      if (!text(reason)) throw invalid('reason', 'is required: why it is cleared');
      // Only one in force: an expired one is the sweep's to record, as `expire`.
      const removed = await removeOverride(redis, keys, layerKey(scope, name), {
        mode: 'live',
        action: 'clear',
        actor: actor.trim().slice(0, 64),
        reason: reason.trim().slice(0, 500),
      });
      return removed !== undefined;
    },

    async list() {
      const now = Date.now();
      const fields = await redis.hgetall(hash);
      return adjustmentEntries(fields, 'override')
        .map(([, o]) => o)
        .filter((o) => o.untilMs > now)
        .sort((a, b) => a.untilMs - b.untilMs);
    },

    async audit(count = 100) {
      const entries = (await redis.xrevrange(keys.audit(), '+', '-', 'COUNT', count)) as [string, string[]][];
      return entries.map(([id, flat]) => entryOf(id, flat));
    },

    async sweep(now = Date.now()) {
      return sweepOverrides(redis, keys, now);
    },
  };
}
