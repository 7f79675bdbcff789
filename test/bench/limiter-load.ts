// One load generator of the limiter scenario, run as a process of its own so that the
// client side is not what limits either contender. Prints { decisions, granted }.
// Usage: limiter-load.ts <json options>
import { Redis } from 'ioredis';
import { createKeys, defineScripts } from '@sluice/core';
import { createLimiter, type Layers } from '@sluice/throttle';

const { url, prefix, mode, seconds, callers } = JSON.parse(process.argv[2]!) as {
  url: string;
  prefix: string;
  mode: 'ours' | 'textbook';
  seconds: number;
  callers: number;
};
const keys = createKeys(prefix);
const rand = (n: number): number => Math.floor(Math.random() * n);
const layers = (): Layers => [
  { key: keys.bucket('provider', 'ses'), rate: 1_000_000, burst: 1000 },
  { key: keys.bucket('receiver', `d${rand(2000)}`), rate: 20, burst: 5 },
  { key: keys.bucket('pool', 'default'), rate: 1_000_000, burst: 1000 },
  { key: keys.bucket('campaign', `c${rand(50)}`), rate: 400, burst: 40 },
  { key: keys.bucket('tenant', `t${rand(10)}`), rate: 2000, burst: 200 },
];
const redis = new Redis(url, { enableAutoPipelining: true });
const limiter = createLimiter({ redis, reserves: { critical: 0.2, high: 0 } });
const textbook = defineScripts(redis, new URL('./', import.meta.url), {
  benchTokenBucket: { file: 'token-bucket-1.lua', keys: 1 },
});

async function decide(): Promise<boolean> {
  if (mode === 'ours')
    return (await limiter.admit({ layers: layers(), priority: 'normal', horizonMs: 0 })).outcome === 'granted';
  let ok = true;
  for (const l of layers()) {
    const [allowed] = (await textbook.benchTokenBucket(`${l.key}:tb`, l.rate!, l.burst!, 1)) as [number];
    ok &&= allowed === 1;
  }
  return ok;
}

let decisions = 0;
let granted = 0;
const start = Date.now();
const end = start + seconds * 1000;
await Promise.all(
  Array.from({ length: callers }, async () => {
    while (Date.now() < end) {
      if (await decide()) granted++;
      decisions++;
    }
  }),
);
const ms = Date.now() - start;
await redis.quit();
process.stdout.write(`${JSON.stringify({ decisions, granted, ms })}\n`);
