import { expect, it } from 'vitest';
import { BLOCK_JOB, COMPACT_BLOCK, createKeys } from '@sluice/core';
import { createHeartbeat, createQueues } from '@sluice/store';
import { maxInWindow, peakGuard, waitFor } from './support/fleet.js';
import { useFleet } from './support/use-fleet.js';

// Campaign jobs by block (docs/design/batches.md): the injection writes one campaign job per run
// of positions in a compact block, and the scheduler admits each recipient of it on its own. A
// campaign quota holds the queue (the block keeps those not admitted), a slow receiver's
// recipients wait alone in its line; each recipient is sent once, within every rate. A fleet with
// a scheduler that does not take blocks gets one job a recipient.
const CAMPAIGN = { rate: 150, burst: 15 };
const SLOW = { rate: 10, burst: 2 };
const fleet = useFleet({
  schedulers: 1,
  workers: 2,
  config: {
    providers: { ses: { kind: 'ses', sandbox: true, rate: 1_000, burst: 100, concurrency: 16 } },
    receivers: [{ name: 'slow', domains: ['slow.test'], ...SLOW }],
  },
  scenario: { default: { latencyMs: 5 } },
});

const queuesOf = () => {
  const { redis, prefix } = fleet();
  return createQueues({ redis, keys: createKeys(prefix) });
};

async function jobNames(campaignId: string): Promise<string[]> {
  const queues = queuesOf();
  try {
    const jobs = await queues.campaign(campaignId).getJobs(['waiting', 'delayed', 'active', 'prioritized']);
    return jobs.map((j) => j.name);
  } finally {
    await queues.close();
  }
}

it('writes a campaign in blocks; each recipient admitted alone: held by its campaign quota, waiting in a slow receiver’s line, sent once', async () => {
  const { client, sandbox } = fleet();
  await client.campaigns.create({
    id: 'blocks',
    priority: 'low',
    ...CAMPAIGN,
    content: { from: 'Acme <news@acme.test>', subject: 'Hello {{n}}', text: 'Item {{n}}' },
  });
  await client.campaigns.launch('blocks', { total: 900, sample: { 'd0.test': 1 } });
  const count = 900;
  const to = (i: number): string => (i % 30 === 0 ? `s${i}@slow.test` : `u${i}@d${i % 3}.test`);
  async function* recipients() {
    for (let i = 0; i < count; i++) yield { to: to(i), data: { n: i } };
  }
  const injected = client.campaigns.inject('blocks', recipients(), { chunkSize: 300 });
  // While it runs, the queue holds blocks: far fewer jobs than recipients waiting.
  const names = await waitFor(
    async () => {
      const n = await jobNames('blocks');
      return n.includes(BLOCK_JOB) ? n : null;
    },
    10_000,
    'a block job in the campaign queue',
  );
  expect(names.filter((n) => n === BLOCK_JOB).length).toBeLessThanOrEqual(Math.ceil(count / COMPACT_BLOCK) + 6);
  await injected;
  await waitFor(async () => (await client.campaigns.status('blocks')).pending === 0, 60_000, 'every recipient final');

  const status = await client.campaigns.status('blocks');
  expect(status.counts).toMatchObject({ accepted: count, sent: count });
  const accepted = sandbox.accepted();
  const perId = new Map<string, number>();
  for (const a of accepted) perId.set(a.sluiceId!, (perId.get(a.sluiceId!) ?? 0) + 1);
  expect(perId.size).toBe(count);
  expect([...perId.values()].every((n) => n === 1)).toBe(true);
  expect(accepted.find((a) => a.sluiceId === 'blocks_65')).toMatchObject({ subject: 'Hello 65', to: ['u65@d2.test'] });
  const all = accepted.map((a) => a.arrivedAt);
  const slow = accepted.filter((a) => a.domain === 'slow.test').map((a) => a.arrivedAt);
  console.log(
    `blocks: ${count} recipients, peak ${maxInWindow(all)}/s (campaign ${CAMPAIGN.rate}/s), slow.test ${maxInWindow(slow)}/s`,
  );
  expect(slow).toHaveLength(30);
  expect(maxInWindow(all)).toBeLessThanOrEqual(peakGuard(CAMPAIGN.rate, CAMPAIGN.burst));
  expect(maxInWindow(slow)).toBeLessThanOrEqual(peakGuard(SLOW.rate, SLOW.burst));
  // Held by its quota: the campaign took at least the time its rate allows.
  expect(Math.max(...all) - Math.min(...all)).toBeGreaterThan(((count - CAMPAIGN.burst) / CAMPAIGN.rate) * 1000 * 0.8);
});

it('writes one job a recipient while a live scheduler does not take blocks (a fleet being upgraded)', async () => {
  const { client, redis, prefix } = fleet();
  // A scheduler of an earlier release: its heartbeat says nothing of blocks.
  const old = createHeartbeat({ redis, keys: createKeys(prefix), role: 'scheduler' });
  await old.start();
  try {
    expect((await client.fleet()).blocks).toBe(false);
    await client.campaigns.create({
      id: 'singles',
      priority: 'low',
      content: { from: 'news@acme.test', subject: 'Hi {{n}}', text: 'x' },
    });
    await client.campaigns.pause('singles');
    await client.campaigns.launch('singles', { total: 100, sample: { 'd0.test': 1 } });
    async function* recipients() {
      for (let i = 0; i < 100; i++) yield { to: `v${i}@d0.test`, data: { n: i } };
    }
    await client.campaigns.inject('singles', recipients());
    const names = await jobNames('singles');
    expect(names).toHaveLength(100);
    expect(new Set(names)).toEqual(new Set(['send']));
  } finally {
    await old.close();
  }
  expect((await client.fleet()).blocks).toBe(true);
  await client.campaigns.resume('singles');
  await waitFor(async () => (await client.campaigns.status('singles')).pending === 0, 30_000, 'every recipient final');
});
