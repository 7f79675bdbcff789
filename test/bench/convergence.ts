// `node --conditions=@sluice/source --import tsx test/bench/convergence.ts`: an experiment,
// not part of `pnpm bench` yet. A receiver takes 40/s (hidden capacity) while Sluice was told
// 160/s; after 22 s it takes 60/s. Prints the receiver's accepted/refused counts second by
// second under a proportional governor rule on receiver throttling (issue 5's convergence
// must-show: ≤ 5% deferrals after convergence, the rate within ±10%, and a rise followed
// without a burst; not met yet: see DESIGN.md, The feedback loop).
import { startFleet } from '../support/fleet.js';
import { startRedisServer } from '../support/redis-server.js';
import { bulk, sleep } from './support.js';

const CAPACITY = 40;
const server = await startRedisServer();
const fleet = await startFleet({
  redisUrl: server.url,
  schedulers: 1,
  workers: 2,
  scenario: { domains: { 'slow.test': { rate: CAPACITY, burst: 4 } } },
  config: {
    defaultProvider: 'relay',
    providers: { relay: { kind: 'smtp', rate: 400, burst: 40, concurrency: 16 } },
    receivers: [{ name: 'slow', domains: ['slow.test'], rate: CAPACITY * 4, burst: 16 }],
    delivery: { retry: { throttled: { baseMs: 500, maxMs: 2_000 } } },
    governor: {
      rules: [{ id: 'receiver-throttling', signal: 'throttled', over: 'attempted', above: 0.02, minVolume: 20, scope: 'receiver', proportional: true, cooldownMs: 1_500 }],
    },
  },
});
try {
  await fleet.client.sendBulk(bulk(1600, () => 'slow.test', { priority: 'low' }));
  const seconds: string[] = [];
  let last = { accepted: 0, throttled: 0 };
  for (let t = 0; t < 40; t++) {
    if (t === 22) fleet.sandbox.setScenario({ domains: { 'slow.test': { rate: CAPACITY * 1.5, burst: 6 } } });
    await sleep(1000);
    const now = fleet.sandbox.stats().byDomain['slow.test'] ?? { accepted: 0, throttled: 0 };
    seconds.push(`${now.accepted - last.accepted}/${now.throttled - last.throttled}`);
    last = now;
  }
  process.stdout.write(`accepted/refused per second (capacity ${CAPACITY}/s, ${CAPACITY * 1.5}/s from 22 s):\n${seconds.join(' ')}\n`);
} finally {
  await fleet.stop();
  await server.stop();
}
