import { expect, it } from 'vitest';
import { maxInWindow, peakGuard, waitFor } from './support/fleet.js';
import { useFleet } from './support/use-fleet.js';

// Batches (docs/design/batches.md) through the whole fleet: a campaign's recipients admitted one by
// one, moved and sent in SES SendBulkEmail calls, each arriving within every layer's rate + burst
// and ending on its own answer. Measured at the sandbox, as a receiver sees them.
const PROVIDER = { rate: 300, burst: 30 };
const SLOW = { rate: 20, burst: 4 };
const fleet = useFleet({
  schedulers: 1,
  workers: 2,
  config: {
    providers: { ses: { kind: 'ses', sandbox: true, ...PROVIDER, concurrency: 16 } },
    receivers: [{ name: 'slow', domains: ['slow.test'], ...SLOW }],
  },
  scenario: { default: { latencyMs: 5 }, domains: { 'gone.test': { bounce: ['*@gone.test'] } } },
});

it('sends a campaign in batches, each recipient once and on its own answer, within every layer’s rate + burst', async () => {
  const { client, sandbox } = fleet();
  await client.campaigns.create({
    id: 'digest',
    priority: 'low',
    content: { from: 'Acme <news@acme.test>', subject: 'Hello {{n}}', text: 'Item {{n}}' },
  });
  await client.campaigns.launch('digest', { total: 1_500, sample: { 'd0.test': 1 } });
  const count = 1_500;
  // 100 to a slow receiver, 10 to addresses that bounce, the rest over four domains.
  const to = (i: number): string =>
    i % 15 === 0 ? `s${i}@slow.test` : i % 150 === 1 ? `x${i}@gone.test` : `u${i}@d${i % 4}.test`;
  async function* recipients() {
    for (let i = 0; i < count; i++) yield { to: to(i), data: { n: i } };
  }
  await client.campaigns.inject('digest', recipients());
  await waitFor(async () => (await client.campaigns.status('digest')).pending === 0, 60_000, 'every recipient final');

  const status = await client.campaigns.status('digest');
  expect(status.counts).toMatchObject({ accepted: count, sent: count - 10, rejected: 10 });
  const accepted = sandbox.accepted();
  const perId = new Map<string, number>();
  for (const a of accepted) perId.set(a.sluiceId!, (perId.get(a.sluiceId!) ?? 0) + 1);
  expect(perId.size).toBe(count - 10);
  expect([...perId.values()].every((n) => n === 1)).toBe(true);
  expect(accepted.find((a) => a.sluiceId === 'digest_7')).toMatchObject({ subject: 'Hello 7', to: ['u7@d3.test'] });
  // Each bounced address ended alone, on its own answer.
  expect(await client.messages.status('digest_1')).toMatchObject({ state: 'rejected', lastOutcome: 'bad_recipient' });

  // Most recipients went in calls of many: far fewer calls than recipients.
  const calls = new Map<string, number>();
  for (const a of accepted) {
    const call = a.tags.sluice_batch ?? a.providerMessageId;
    calls.set(call, (calls.get(call) ?? 0) + 1);
  }
  const sizes = [...calls.values()].sort((a, b) => b - a);
  console.log(`call sizes: ${sizes.slice(0, 40).join(' ')} … ${sizes.slice(-20).join(' ')}`);
  const batched = accepted.filter((a) => a.tags.sluice_batch !== undefined).length;
  console.log(
    `batches: ${accepted.length} recipients in ${calls.size} calls (${(accepted.length / calls.size).toFixed(1)} a call, ` +
      `${batched} in batches); peak ${maxInWindow(accepted.map((a) => a.arrivedAt))}/s, slow.test ` +
      `${maxInWindow(accepted.filter((a) => a.domain === 'slow.test').map((a) => a.arrivedAt))}/s`,
  );
  expect(batched).toBeGreaterThan(0.8 * accepted.length);
  expect(calls.size).toBeLessThan(accepted.length / 4);
  // What the sandbox saw: the provider and the slow receiver each within rate + burst a second.
  expect(maxInWindow(accepted.map((a) => a.arrivedAt))).toBeLessThanOrEqual(peakGuard(PROVIDER.rate, PROVIDER.burst));
  const slow = accepted.filter((a) => a.domain === 'slow.test').map((a) => a.arrivedAt);
  expect(slow).toHaveLength(100);
  expect(maxInWindow(slow)).toBeLessThanOrEqual(peakGuard(SLOW.rate, SLOW.burst));
});
