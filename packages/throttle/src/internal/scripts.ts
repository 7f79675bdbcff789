import { readFileSync } from 'node:fs';
import type { Redis } from 'ioredis';

/** Our Lua scripts, one a file, named `<name>-<numberOfKeys>.lua`. */
const SCRIPTS = {
  sluiceAdmit: { file: 'admit-5.lua', keys: 5 },
  sluiceSlotAcquire: { file: 'slot-acquire-2.lua', keys: 2 },
  sluiceSlotRelease: { file: 'slot-release-2.lua', keys: 2 },
} as const;

type ScriptName = keyof typeof SCRIPTS;

/** A Redis client with our scripts defined (EVALSHA, falling back to EVAL on NOSCRIPT). */
export type ScriptedRedis = Redis & {
  [K in ScriptName]: (...args: (string | number)[]) => Promise<unknown>;
};

const sources = new Map<ScriptName, string>();
function source(name: ScriptName): string {
  let text = sources.get(name);
  if (text === undefined) {
    text = readFileSync(new URL(`../lua/${SCRIPTS[name].file}`, import.meta.url), 'utf8');
    sources.set(name, text);
  }
  return text;
}

/** Defines the throttle scripts on a connection (idempotent). */
export function defineScripts(redis: Redis): ScriptedRedis {
  for (const name of Object.keys(SCRIPTS) as ScriptName[]) {
    if (typeof (redis as unknown as Record<string, unknown>)[name] !== 'function') {
      redis.defineCommand(name, { numberOfKeys: SCRIPTS[name].keys, lua: source(name) });
    }
  }
  return redis as ScriptedRedis;
}
