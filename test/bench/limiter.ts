import { spawn } from 'node:child_process';
import { Redis } from 'ioredis';
import { fmt, type Row } from './support.js';

/** Figures of the limiter scenario. */
export interface LimiterFigures {
  layers: 5;
  decisionsPerSec: number;
  fiveCallsDecisionsPerSec: number;
  ratio: number;
  grantedShare: number;
  /** Redis CPU per decision (INFO commandstats): the shared resource, steadier than rates on a busy machine. */
  redisMicrosPerDecision: number;
  fiveCallsRedisMicrosPerDecision: number;
  /** Decisions per admit-n call: the batch a process's concurrent callers make. */
  decisionsPerCall: number;
}

async function run(
  url: string,
  prefix: string,
  mode: 'ours' | 'textbook',
  seconds: number,
  threads: number,
): Promise<{ perSec: number; granted: number; decisions: number }> {
  const results = await Promise.all(
    Array.from(
      { length: threads },
      () =>
        new Promise<{ decisions: number; granted: number; ms: number }>((resolve, reject) => {
          const options = JSON.stringify({ url, prefix, mode, seconds, callers: 48 });
          const child = spawn(
            process.execPath,
            [
              '--conditions=@sluice/source',
              '--import',
              'tsx',
              new URL('./limiter-load.ts', import.meta.url).pathname,
              options,
            ],
            {
              stdio: ['ignore', 'pipe', 'inherit'],
            },
          );
          let out = '';
          child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
          child.once('exit', (code) =>
            code === 0
              ? resolve(JSON.parse(out) as { decisions: number; granted: number; ms: number })
              : reject(new Error(`limiter load exited with ${code}`)),
          );
        }),
    ),
  );
  const decisions = results.reduce((n, r) => n + r.decisions, 0);
  const granted = results.reduce((n, r) => n + r.granted, 0);
  // Each generator times its own loop (its start-up is not counted); rates add up.
  const perSec = results.reduce((n, r) => n + r.decisions / (r.ms / 1000), 0);
  return { perSec, granted: granted / Math.max(1, decisions), decisions };
}

/**
 * Five-layer all-or-nothing decisions per second against the same five layers checked by
 * five calls of the textbook single-bucket script, on the same Redis with the same callers
 * (processes of their own, each with its own connection). Layer limits make a mix of grants and
 * denials (about half granted).
 */
export async function benchLimiter(redisUrl: string, seconds: number, threads = 2): Promise<LimiterFigures> {
  const prefix = `bench-l${Date.now()}`;
  const stats = new Redis(redisUrl);
  const scriptMicros = async (): Promise<{ calls: number; usec: number }> => {
    const m = /cmdstat_evalsha:calls=(\d+),usec=(\d+)/.exec(await stats.info('commandstats'));
    await stats.config('RESETSTAT');
    return { calls: Number(m?.[1] ?? 0), usec: Number(m?.[2] ?? 0) };
  };
  await scriptMicros();
  const ours = await run(redisUrl, prefix, 'ours', seconds, threads);
  const oursRedis = await scriptMicros();
  const textbook = await run(redisUrl, prefix, 'textbook', seconds, threads);
  const textbookRedis = await scriptMicros();
  await stats.quit();
  // A script call of ours decides a batch (admit-n.lua); the generators count decisions.
  const oursDecisions = ours.decisions;
  const textbookDecisions = textbookRedis.calls / 5;
  return {
    layers: 5,
    decisionsPerSec: Math.round(ours.perSec),
    fiveCallsDecisionsPerSec: Math.round(textbook.perSec),
    ratio: ours.perSec / textbook.perSec,
    grantedShare: ours.granted,
    redisMicrosPerDecision: oursRedis.usec / Math.max(1, oursDecisions),
    fiveCallsRedisMicrosPerDecision: textbookRedis.usec / Math.max(1, textbookDecisions),
    decisionsPerCall: oursDecisions / Math.max(1, oursRedis.calls),
  };
}

/** The limiter's rows of the bench table. */
export function limiterRows(limiter: LimiterFigures): Row[] {
  return [
    [
      'limiter: 5-layer decisions/s',
      fmt(limiter.decisionsPerSec),
      `${fmt(limiter.fiveCallsDecisionsPerSec)} (5 textbook calls)`,
      `${limiter.ratio.toFixed(2)}×`,
      '≥ 2× and ≥ 30,000/s',
    ],
    [
      'limiter: Redis CPU per decision',
      `${limiter.redisMicrosPerDecision.toFixed(1)} µs`,
      `${limiter.fiveCallsRedisMicrosPerDecision.toFixed(1)} µs (5 textbook calls)`,
      `${(limiter.fiveCallsRedisMicrosPerDecision / limiter.redisMicrosPerDecision).toFixed(2)}× less`,
      'context',
    ],
    [
      'limiter: decisions per script call',
      limiter.decisionsPerCall.toFixed(1),
      '1 (a call a decision)',
      `${limiter.decisionsPerCall.toFixed(1)}×`,
      'context',
    ],
  ];
}
