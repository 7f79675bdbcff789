import type { Redis } from 'ioredis';
import { defineScripts as define, type WithScripts } from '@sluice/core';

/** The throttle's Lua scripts, one a file, named `<name>-<numberOfKeys>.lua`. */
const SCRIPTS = {
  sluiceAdmit: { file: ['plan-caps.lua', 'admit-n.lua'], keys: 'n' as const },
  sluiceArrive: { file: 'arrive-n.lua', keys: 'n' as const },
  sluiceSlotAcquire: { file: 'slot-acquire-2.lua', keys: 2 },
  sluiceSlotRelease: { file: 'slot-release-2.lua', keys: 2 },
  sluiceSlowDown: { file: 'slow-down-1.lua', keys: 1 },
  sluiceLease: { file: 'lease-1.lua', keys: 1 },
  sluiceOverrideRemove: { file: 'override-remove-2.lua', keys: 2 },
  sluiceTotalsAdd: { file: 'totals-add-1.lua', keys: 1 },
  sluiceCountOnce: { file: 'count-once-11.lua', keys: 11 },
};

/** A Redis client with the throttle's scripts defined. */
export type ScriptedRedis = WithScripts<Redis, typeof SCRIPTS>;

/** Defines the throttle scripts on a connection (idempotent). */
export function defineScripts(redis: Redis): ScriptedRedis {
  return define(redis, new URL('../lua/', import.meta.url), SCRIPTS);
}
