import { expect, it } from 'vitest';
import type { PriorityClass } from '@sluice/core';
import { startRedisServer, type RedisServer } from './support/redis-server.js';
import { waitFor } from './support/fleet.js';
import { useFleet } from './support/use-fleet.js';

// `reserves.localShare`: while the limiter's Redis does not answer and the queues' does, critical
// mail goes on at a share of its reserve, on each process's own buckets; nothing else goes.
// What the sandbox receives is measured: no normal mail while the limiter is away, and critical
// mail at no more than the share (5 a second here), not the burst a limiter-less fleet would send.

const RATE = 50;
const CRITICAL = 0.2;
const SHARE = 0.5;
/** Critical mail a second one process may send while the limiter is away: 0.5 × 0.2 × 50. */
const LOCAL_RATE = SHARE * CRITICAL * RATE;

const limiter: RedisServer = await startRedisServer();
const fleet = useFleet({
  schedulers: 1,
  workers: 1,
  config: () => ({
    redis: { limiter: limiter.url },
    providers: { ses: { kind: 'ses', sandbox: true, rate: RATE, burst: 10, concurrency: 16 } },
    reserves: { critical: CRITICAL, localShare: SHARE, localAfterMs: 500 },
  }),
});

const send = (i: number, priority: PriorityClass) =>
  fleet().client.send({
    from: 'Acme <id@acme.test>',
    to: `user${i}@example.test`,
    subject: `m${i}`,
    text: 'hi',
    priority,
  });

it('sends only critical mail, within its local share, while the limiter Redis is away; the rest once it is back', async () => {
  const warm = await Promise.all(Array.from({ length: 6 }, (_, i) => send(i, i % 2 ? 'critical' : 'normal')));
  await waitFor(() => fleet().sandbox.accepted().length >= 6, 20_000, 'the first 6 accepted');

  await limiter.kill('SIGSTOP');
  const stoppedAt = Date.now();
  const critical = await Promise.all(Array.from({ length: 40 }, (_, i) => send(100 + i, 'critical')));
  const normal = await Promise.all(Array.from({ length: 20 }, (_, i) => send(200 + i, 'normal')));
  await new Promise((r) => setTimeout(r, 6_000));
  const resumedAt = Date.now();
  await limiter.kill('SIGCONT');

  const away = fleet()
    .sandbox.accepted()
    .filter((a) => a.arrivedAt >= stoppedAt && a.arrivedAt < resumedAt);
  const criticalIds = new Set<string | undefined>(critical.map((m) => m.id));
  const normalIds = new Set<string | undefined>(normal.map((m) => m.id));
  expect(away.filter((a) => normalIds.has(a.sluiceId)).length, 'no normal mail while the limiter is away').toBe(0);
  const times = away.filter((a) => criticalIds.has(a.sluiceId)).map((a) => a.arrivedAt);
  times.sort((a, b) => a - b);
  // Some critical mail went (the share is used), and never faster than the share: in any
  // second at most the share's rate and its burst of one, with a send's jitter.
  expect(times.length, 'critical mail goes on while the limiter is away').toBeGreaterThanOrEqual(8);
  let busiest = 0;
  for (let i = 0; i < times.length; i++) {
    let j = i;
    while (j + 1 < times.length && times[j + 1]! - times[i]! < 1_000) j++;
    busiest = Math.max(busiest, j - i + 1);
  }
  const seconds = (times.at(-1)! - times[0]!) / 1000;
  console.log(
    `limiter away ${((resumedAt - stoppedAt) / 1000).toFixed(1)} s: ${times.length} critical sent, ` +
      `busiest second ${busiest} (share ${LOCAL_RATE}/s), ${(times.length / Math.max(seconds, 1)).toFixed(1)}/s`,
  );
  expect(busiest, 'critical mail within the local share').toBeLessThanOrEqual(LOCAL_RATE + 2);
  expect(times.length).toBeLessThanOrEqual(LOCAL_RATE * seconds + 2);

  // Back: everything else goes, each once, and every record says sent.
  const all = [...warm, ...critical, ...normal];
  await waitFor(() => fleet().sandbox.accepted().length >= all.length, 30_000, 'every message sent once back');
  await new Promise((r) => setTimeout(r, 1_000));
  const arrived = fleet()
    .sandbox.accepted()
    .map((a) => a.sluiceId);
  expect(arrived.length, 'each once').toBe(all.length);
  expect(new Set(arrived)).toEqual(new Set(all.map((m) => m.id)));
  for (const m of all) {
    await waitFor(
      async () => ((await fleet().client.messages.status(m.id))?.state === 'sent' ? true : null),
      10_000,
      `${m.id} sent`,
    );
  }
}, 120_000);

it('stops its Redis', async () => {
  await limiter.stop();
});
