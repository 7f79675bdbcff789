import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { Redis } from 'ioredis';
import { benchProfilesScripts } from '../support/env.js';

// Redis time by script (`SLUICE_BENCH_SCRIPTS=1`): SLOWLOG at a threshold of 0 µs keeps every
// command with its duration and arguments, so each EVALSHA is named by its script's SHA1
// (Sluice's `packages/*/src/lua/*.lua` and BullMQ's scripts, hashed as ioredis defines them).
// The log costs Redis time of its own: a profile of where time goes, not a figure to quote.

/** Whether the bench was asked for the profile. */
export const profileScripts = benchProfilesScripts();

const root = new URL('../../', import.meta.url).pathname;

function sha1(text: string): string {
  return createHash('sha1').update(text).digest('hex');
}

/** The scripts made of several files, each its files in order. */
const COMBINED: Record<string, readonly string[]> = { 'throttle:admit-n': ['plan-caps.lua', 'admit-n.lua'] };

/** SHA1 → script name, for every script Sluice or BullMQ defines. */
function scriptNames(): Map<string, string> {
  const names = new Map<string, string>();
  for (const pkg of readdirSync(join(root, 'packages'))) {
    const dir = join(root, 'packages', pkg, 'src', 'lua');
    let files: string[] = [];
    try {
      files = readdirSync(dir).filter((f) => f.endsWith('.lua'));
    } catch {
      continue;
    }
    for (const f of files) names.set(sha1(readFileSync(join(dir, f), 'utf8')), `${pkg}:${f.replace(/\.lua$/, '')}`);
  }
  // Scripts of several files, as defined (packages/throttle/src/internal/scripts.ts).
  for (const [name, parts] of Object.entries(COMBINED)) {
    const [pkg] = name.split(':');
    names.set(
      sha1(parts.map((f) => readFileSync(join(root, 'packages', pkg!, 'src', 'lua', f), 'utf8')).join('\n')),
      name,
    );
  }
  const require = createRequire(join(root, 'packages', 'store', 'package.json'));
  const scripts = join(dirname(require.resolve('bullmq')), 'scripts');
  for (const f of readdirSync(scripts).filter((n) => n.endsWith('.js') && n !== 'index.js')) {
    const mod = require(join(scripts, f)) as Record<string, { name?: string; content?: string }>;
    for (const s of Object.values(mod)) if (s?.content) names.set(sha1(s.content), `bullmq:${s.name ?? f}`);
  }
  return names;
}

/** Starts keeping every command in the slow log. */
export async function startScriptProfile(redis: Redis): Promise<void> {
  await redis.config('SET', 'slowlog-max-len', '1000000');
  await redis.config('SET', 'slowlog-log-slower-than', '0');
  await redis.slowlog('RESET');
}

/** Stops, and says µs and calls per recipient by script (EVALSHA) or command, most time first. */
export async function scriptProfile(redis: Redis, recipients: number): Promise<string> {
  await redis.config('SET', 'slowlog-log-slower-than', '10000');
  const entries = (await redis.slowlog('GET', '-1')) as [number, number, number, string[]][];
  const names = scriptNames();
  const by = new Map<string, { calls: number; micros: number }>();
  for (const [, , micros, args] of entries) {
    const command = String(args[0] ?? '').toLowerCase();
    // A command other than a script is named with its key's shape (ids and numbers left out).
    const shape = String(args[1] ?? '')
      .replace(/\{[^}]*\}/g, '{}')
      .replace(/[0-9a-f]{8,}|\d+/g, '#')
      .slice(0, 48);
    const name =
      command === 'evalsha'
        ? (names.get(String(args[1])) ?? `evalsha:${String(args[1]).slice(0, 8)}`)
        : `${command} ${shape}`;
    const e = by.get(name) ?? { calls: 0, micros: 0 };
    e.calls += 1;
    e.micros += micros;
    by.set(name, e);
  }
  await redis.slowlog('RESET');
  return [...by]
    .sort((a, b) => b[1].micros - a[1].micros)
    .slice(0, 24)
    .map(([name, e]) => `${name} ${(e.calls / recipients).toFixed(2)}× ${(e.micros / recipients).toFixed(1)} µs`)
    .join(', ');
}
