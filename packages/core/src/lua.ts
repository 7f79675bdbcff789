import { readFileSync } from 'node:fs';

/** What defining a script needs of a Redis client (ioredis fits). */
export interface ScriptHost {
  defineCommand(name: string, definition: { numberOfKeys?: number; lua: string }): void;
}

/**
 * A package's scripts: command name → file (`<name>-<numberOfKeys>.lua`) and key count; `'n'`
 * (`<name>-n.lua`): as many keys as the caller passes, their count its first argument. Several
 * files are one script, in order (the first ones define what the last one uses).
 */
export type ScriptTable = Record<string, { file: string | readonly string[]; keys: number | 'n' }>;

/** The client with the table's commands on it. */
export type WithScripts<R, T extends ScriptTable> = R & {
  [K in keyof T]: (...args: (string | number)[]) => Promise<unknown>;
};

/**
 * Defines a package's Lua scripts on a connection, once. ioredis runs them by EVALSHA and
 * falls back to EVAL after a restart or failover (NOSCRIPT). Files are read at start.
 */
export function defineScripts<R extends ScriptHost, T extends ScriptTable>(
  redis: R,
  dir: URL,
  scripts: T,
): WithScripts<R, T> {
  for (const [name, { file, keys }] of Object.entries(scripts)) {
    if (typeof (redis as unknown as Record<string, unknown>)[name] !== 'function') {
      const lua = [file]
        .flat()
        .map((f) => readFileSync(new URL(f, dir), 'utf8'))
        .join('\n');
      redis.defineCommand(name, keys === 'n' ? { lua } : { numberOfKeys: keys, lua });
    }
  }
  return redis as WithScripts<R, T>;
}
