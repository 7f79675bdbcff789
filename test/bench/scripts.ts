// `pnpm bench --only scripts`: which scripts a message's Redis time goes to, in Sluice's
// fleet and in bare BullMQ's two hops. SLOWLOG at 0 µs logs every call with its time (the
// script's own commands included); logging every command slows Redis down, so the times are
// for shares and for comparing the two sides, not absolute costs (`--only cost` has those).
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import type { Redis } from 'ioredis';
import { withSluiceRun, withTwoHopRun } from './cost.js';
import { sleep } from './support.js';

/** One script's share: calls and SLOWLOG µs per message. */
export interface ScriptTime {
  script: string;
  calls: number;
  micros: number;
}

const sha1 = (text: string): string => createHash('sha1').update(text).digest('hex');

/** Script SHA → name: ours (`packages/*\/src/lua/*.lua`) and BullMQ's. */
async function scriptNames(): Promise<Map<string, string>> {
  const names = new Map<string, string>();
  const root = resolve(import.meta.dirname, '../..');
  for (const pkg of readdirSync(join(root, 'packages'))) {
    const dir = join(root, 'packages', pkg, 'src', 'lua');
    let files: string[] = [];
    try {
      files = readdirSync(dir);
    } catch {
      continue; // a package without scripts
    }
    for (const f of files.filter((f) => f.endsWith('.lua'))) names.set(sha1(readFileSync(join(dir, f), 'utf8')), f);
  }
  const scripts = join(dirname(createRequire(import.meta.url).resolve('bullmq')), 'scripts');
  for (const f of readdirSync(scripts).filter((f) => /^[a-zA-Z]+-\d+\.js$/.test(f))) {
    const mod = (await import(join(scripts, f))) as Record<string, { name?: string; content?: string }>;
    for (const s of Object.values(mod)) if (s?.content && s.name) names.set(sha1(s.content), `BullMQ ${s.name}`);
  }
  return names;
}

/** Runs `load` with every call logged, and sums the script calls by name, per message. */
async function logged(redis: Redis, messages: number, load: () => Promise<void>): Promise<ScriptTime[]> {
  const names = await scriptNames();
  await redis.config('SET', 'slowlog-max-len', '5000000');
  await redis.slowlog('RESET');
  await redis.config('SET', 'slowlog-log-slower-than', '0');
  await load();
  await redis.config('SET', 'slowlog-log-slower-than', '10000');
  const log = (await redis.slowlog('GET', -1)) as [number, number, number, string[]][];
  const by = new Map<string, { calls: number; micros: number }>();
  for (const [, , micros, args] of log) {
    if (String(args[0]).toLowerCase() !== 'evalsha') continue;
    const name = names.get(String(args[1])) ?? `unknown ${String(args[1]).slice(0, 8)}`;
    const s = by.get(name) ?? { calls: 0, micros: 0 };
    s.calls += 1;
    s.micros += micros;
    by.set(name, s);
  }
  return [...by]
    .map(([script, s]) => ({ script, calls: s.calls / messages, micros: s.micros / messages }))
    .sort((a, b) => b.micros - a.micros);
}

/** Sluice's fleet and BullMQ's two hops (the `cost` figure's runs), each on a Redis of its own. */
export async function benchScripts(messages: number): Promise<{ sluice: ScriptTime[]; bullmqTwoHops: ScriptTime[] }> {
  const sluice = await withSluiceRun(messages, ({ redis, go }) =>
    logged(redis, messages, async () => {
      await go();
      await sleep(3_000); // the records final, the outcomes acknowledged
    }),
  );
  const bullmqTwoHops = await withTwoHopRun(messages, ({ redis, go }) => logged(redis, messages, go));
  return { sluice, bullmqTwoHops };
}

/** The table's rows: each script of either side, calls and µs a message. */
export function scriptRows(r: { sluice: ScriptTime[]; bullmqTwoHops: ScriptTime[] }): string[][] {
  const cell = (s: ScriptTime | undefined): string => (s ? `${s.calls.toFixed(2)}× ${s.micros.toFixed(0)} µs` : '-');
  const names = [...new Set([...r.sluice, ...r.bullmqTwoHops].map((s) => s.script))];
  const total = (list: ScriptTime[]) => list.reduce((n, s) => n + s.micros, 0);
  return [
    ...names.map((name) => [
      `scripts: ${name}`,
      cell(r.sluice.find((s) => s.script === name)),
      cell(r.bullmqTwoHops.find((s) => s.script === name)),
      '',
      'SLOWLOG µs a message',
    ]),
    [
      'scripts: all',
      `${total(r.sluice).toFixed(0)} µs`,
      `${total(r.bullmqTwoHops).toFixed(0)} µs`,
      `${(total(r.sluice) / total(r.bullmqTwoHops)).toFixed(2)}×`,
      'shares, not costs',
    ],
  ];
}
