import { readFileSync } from 'node:fs';
import type { Redis } from 'ioredis';

const SCRIPTS = {
  sluiceAccept: { file: 'accept-2.lua', keys: 2 },
  sluiceTransition: { file: 'transition-2.lua', keys: 2 },
  sluiceFinalize: { file: 'finalize-4.lua', keys: 4 },
} as const;

type ScriptName = keyof typeof SCRIPTS;

/** A Redis client with the store's scripts defined (EVALSHA, falling back to EVAL). */
export type StoreRedis = Redis & { [K in ScriptName]: (...args: (string | number)[]) => Promise<unknown> };

/** Defines the store scripts on a connection (idempotent). */
export function defineScripts(redis: Redis): StoreRedis {
  for (const name of Object.keys(SCRIPTS) as ScriptName[]) {
    if (typeof (redis as unknown as Record<string, unknown>)[name] !== 'function') {
      const lua = readFileSync(new URL(`../lua/${SCRIPTS[name].file}`, import.meta.url), 'utf8');
      redis.defineCommand(name, { numberOfKeys: SCRIPTS[name].keys, lua });
    }
  }
  return redis as StoreRedis;
}
