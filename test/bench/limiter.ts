import { Redis } from 'ioredis';
import { createKeys, defineScripts } from '@sluice/core';
import { createLimiter, type Layers } from '@sluice/throttle';

/** Figures of the limiter scenario. */
export interface LimiterFigures {
  layers: 5;
  decisionsPerSec: number;
  fiveCallsDecisionsPerSec: number;
  ratio: number;
  grantedShare: number;
}

const rand = (n: number): number => Math.floor(Math.random() * n);

/**
 * Five-layer all-or-nothing decisions per second against the same five layers checked by
 * five calls of the textbook single-bucket script. Both run on the same Redis with the same
 * callers; layer limits make a mix of grants and denials.
 */
export async function benchLimiter(redisUrl: string, seconds: number, callers = 64): Promise<LimiterFigures> {
  const keys = createKeys(`bench-l${Date.now()}`);
  const connections = Array.from({ length: 4 }, () => new Redis(redisUrl, { enableAutoPipelining: true }));
  const layers = (): Layers => [
    { key: keys.bucket('provider', 'ses'), rate: 1_000_000, burst: 1000 },
    { key: keys.bucket('receiver', `d${rand(2000)}`), rate: 20, burst: 5 },
    { key: keys.bucket('pool', 'default'), rate: 1_000_000, burst: 1000 },
    { key: keys.bucket('campaign', `c${rand(50)}`), rate: 400, burst: 40 },
    { key: keys.bucket('tenant', `t${rand(10)}`), rate: 2000, burst: 200 },
  ];

  async function run(decide: (conn: Redis) => Promise<boolean>): Promise<{ perSec: number; granted: number }> {
    let decisions = 0;
    let granted = 0;
    const end = Date.now() + seconds * 1000;
    const start = Date.now();
    await Promise.all(
      Array.from({ length: callers }, async (_, i) => {
        const conn = connections[i % connections.length]!;
        while (Date.now() < end) {
          if (await decide(conn)) granted++;
          decisions++;
        }
      }),
    );
    return { perSec: decisions / ((Date.now() - start) / 1000), granted: granted / Math.max(1, decisions) };
  }

  const usec = async (): Promise<string> => {
    const stats = await connections[0]!.info('commandstats');
    await connections[0]!.config('RESETSTAT');
    return /cmdstat_evalsha:calls=(\d+),usec=(\d+),usec_per_call=([\d.]+)/.exec(stats)?.slice(1).join('/') ?? '';
  };
  await usec();
  const limiters = connections.map((redis) => createLimiter({ redis, reserves: { critical: 0.2, high: 0 } }));
  const ours = await run(async (conn) => {
    const r = await limiters[connections.indexOf(conn)]!.admit({ layers: layers(), priority: 'normal', horizonMs: 0 });
    return r.outcome === 'granted';
  });

  console.log('ours calls/usec/per', await usec());
  const scripted = connections.map((c) => defineScripts(c, new URL('./', import.meta.url), { benchTokenBucket: { file: 'token-bucket-1.lua', keys: 1 } }));
  const textbook = await run(async (conn) => {
    const s = scripted[connections.indexOf(conn)]!;
    let ok = true;
    for (const l of layers()) {
      const [allowed] = (await s.benchTokenBucket(`${l.key}:tb`, l.rate!, l.burst!, 1)) as [number];
      ok &&= allowed === 1;
    }
    return ok;
  });

  console.log('textbook calls/usec/per', await usec());
  for (const c of connections) await c.quit();
  return {
    layers: 5,
    decisionsPerSec: Math.round(ours.perSec),
    fiveCallsDecisionsPerSec: Math.round(textbook.perSec),
    ratio: ours.perSec / textbook.perSec,
    grantedShare: ours.granted,
  };
}
