import type { Redis } from 'ioredis';
import type { Keys } from '@sluice/core';
import { defineScripts } from '../internal/scripts.js';
import {
  adjustmentEntries,
  adjustmentNames,
  decodeAdjustment,
  overrideField,
  readAdjustment,
  type OverrideState,
} from './codec.js';
import type { HashCopy } from './hash-copy.js';
import type { Adjustments } from './types.js';

/** The audit stream is capped near this many entries. */
const AUDIT_MAXLEN = 100_000;

/**
 * Removes a layer key's override and writes its audit entry in one script, so it happens
 * once however many callers race: `expired` removes it only once its `untilMs` has passed
 * (the sweep), `live` only while it is in force (an operator's clear). Returns what was removed.
 */
export async function removeOverride(
  redis: Redis,
  keys: Keys,
  layerKey: string,
  entry: { mode: 'expired' | 'live'; action: 'clear' | 'expire'; actor: string; reason: string; now?: number },
): Promise<OverrideState | undefined> {
  const [code, value] = (await defineScripts(redis).sluiceOverrideRemove(
    keys.adjustments(),
    keys.audit(),
    overrideField(layerKey),
    entry.mode,
    entry.action,
    entry.actor,
    entry.now ?? Date.now(),
    entry.reason,
    AUDIT_MAXLEN,
  )) as [number, string];
  return code === 1 ? decodeAdjustment('override', value) : undefined;
}

/**
 * Deletes every override whose time is up, each with one `expire` audit entry (actor
 * `sluice`). Readers already ignore them by then: this keeps the hash and the trail tidy.
 * Returns the overrides this call expired (none that another sweeper got first).
 */
export async function sweepOverrides(redis: Redis, keys: Keys, now = Date.now()): Promise<OverrideState[]> {
  const fields = await redis.hgetall(keys.adjustments());
  const out: OverrideState[] = [];
  // Unreadable ones too: the script takes them for expired.
  for (const layerKey of adjustmentNames(fields, 'override')) {
    const o = readAdjustment(fields, 'override', layerKey);
    if (o !== undefined && o.untilMs > now) continue;
    const removed = await removeOverride(redis, keys, layerKey, {
      mode: 'expired',
      action: 'expire',
      actor: 'sluice',
      reason: 'expired',
      now,
    });
    if (removed) out.push(removed);
  }
  return out;
}

/** Operator overrides (`ovr:`) as the schedulers and workers read them; `@sluice/ops` writes them. */
export type Overrides = Pick<Adjustments, 'override' | 'overrides'>;

/** The override readers over a process's copy of the hash. */
export function createOverrideReader(copy: HashCopy): Overrides {
  // Parsed once a refresh, not once a message: admission asks for five keys per decision.
  let overrides = new Map<string, OverrideState>();
  copy.onRefresh((fields) => {
    overrides = new Map(adjustmentEntries(fields, 'override'));
  });
  return {
    override(layerKey) {
      // Expires by itself: no process has to be running for it to end on time.
      const o = overrides.get(layerKey);
      return o !== undefined && o.untilMs > copy.clock() ? o : undefined;
    },
    overrides() {
      const now = copy.clock();
      return [...overrides].filter(([, o]) => o.untilMs > now).map(([layerKey, o]) => ({ ...o, layerKey }));
    },
  };
}
