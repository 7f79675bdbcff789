import { expect, it } from 'vitest';
import { createKeys } from '@sluice/core';
import { createCampaigns, createQueues } from '@sluice/store';
import { waitFor } from './support/fleet.js';
import { useFleet } from './support/use-fleet.js';

// Four receivers at 30/s and one at a tenth of that, holding 30% of the list.
const FAST = ['f0.test', 'f1.test', 'f2.test', 'f3.test'];
const SLOW = 'slow.test';
const FAST_RATE = 30;
const RESERVE = 0.2; // reserves.critical: bulk mail gets the rest of each receiver's rate
const fleet = useFleet({
  schedulers: 1,
  workers: 1,
  config: {
    injection: { aheadMs: 2_000, minWindow: 200, maxWindow: 3_000 },
    providers: { ses: { kind: 'ses', sandbox: true, rate: 600, burst: 60 } },
    defaults: { campaign: { rate: 1_000 } },
    organisations: { builtIn: false },
    receivers: [
      ...FAST.map((d, i) => ({ name: `fast${i}`, domains: [d], rate: FAST_RATE, burst: 5 })),
      { name: 'slow', domains: [SLOW], rate: FAST_RATE / 10, burst: 1 },
    ],
  },
  scenario: { default: { latencyMs: 2 } },
});

async function* list(count: number) {
  for (let i = 0; i < count; i++) {
    // Positions 0, 3, 6 of every ten go to the slow receiver: 30% spread through the list.
    const slow = i % 10 === 0 || i % 10 === 3 || i % 10 === 6;
    yield { to: `u${i}@${slow ? SLOW : FAST[i % FAST.length]}` };
  }
}

it('a receiver cut to a tenth does not stall the others while the window bound allows', async () => {
  const { client, sandbox } = fleet();
  await client.campaigns.create({ id: 'share', content: { from: 'a@acme.test', subject: 'Hi', text: 'x' } });
  const count = 2_400;
  await client.campaigns.launch('share', {
    total: count,
    sample: { [SLOW]: 12, ...Object.fromEntries(FAST.map((d) => [d, 7])) },
  });
  await waitFor(async () => (await client.campaigns.status('share')).window.max === 3_000, 5_000, 'window');
  const fastCount = count * 0.7;
  const injected = client.campaigns.inject('share', list(count));
  await waitFor(
    () => sandbox.accepted().filter((a) => a.domain !== SLOW).length >= fastCount,
    90_000,
    'the fast receivers done',
  );
  // The slow receiver's recipients still wait in Redis, well within the window bound, and the
  // injection finished behind them rather than waiting for them.
  const result = await injected;
  expect(result.accepted).toBe(count);
  const fast = sandbox
    .accepted()
    .filter((a) => a.domain !== SLOW)
    .map((a) => a.arrivedAt)
    .sort((a, b) => a - b);
  // The middle 80% of the fast receivers' arrivals, against what the limiter allows them.
  const from = fast[Math.floor(fast.length * 0.1)]!;
  const to = fast[Math.floor(fast.length * 0.9)]!;
  const rate = ((fast.length * 0.8) / (to - from)) * 1000;
  const allowed = FAST.length * FAST_RATE * (1 - RESERVE);
  console.log(`fast receivers: ${rate.toFixed(1)}/s of ${allowed}/s allowed (${((rate / allowed) * 100).toFixed(0)}%)`);
  // A wide guard-rail (this machine is shared); `pnpm bench` measures the goal (≥ 90%).
  expect(rate).toBeGreaterThan(allowed * 0.7);
  const status = await client.campaigns.status('share');
  // More wait in Redis than the ready window: the slow receiver's backlog waits in its line
  // (delayed jobs) and counts only against the bound.
  expect(status.pending).toBeGreaterThan(status.window.ready);
  expect(status.pending).toBeLessThanOrEqual(3_000);
  expect(sandbox.accepted().filter((a) => a.domain === SLOW).length).toBeLessThan(count * 0.3);

  // Cancelling ends every recipient still waiting; none is left pending, none sent after.
  const { redis, prefix } = fleet();
  const keys = createKeys(prefix);
  const queues = createQueues({ redis, keys });
  const cancelled = await createCampaigns({ redis, keys, queues }).cancel('share', {
    actor: 'test',
    reason: 'done measuring',
    waitMs: 15_000,
  });
  await queues.close();
  expect(cancelled.cancelled).toBeGreaterThan(0);
  const after = await client.campaigns.status('share');
  if (after.pending !== 0) {
    // Which one, and where: a message no final state reached is a defect to chase, not a flake.
    const open = [];
    for (let i = 0; i < count; i++) {
      const r = await client.messages.status(`share_${i}`);
      if (r && !['sent', 'cancelled'].includes(r.state)) open.push(r);
    }
    console.log('not final after cancel:', JSON.stringify(open), JSON.stringify(cancelled));
  }
  expect(after.pending).toBe(0);
  expect(after.counts.sent + after.counts.cancelled).toBe(count);
  const sent = sandbox.accepted().length;
  await new Promise((r) => setTimeout(r, 1_500));
  expect(sandbox.accepted().length).toBe(sent);
});
