import { expect, it } from 'vitest';
import { waitFor } from './support/fleet.js';
import { useFleet } from './support/use-fleet.js';

// Must-show (b): while a newsletter keeps the provider saturated, critical mail is
// accepted by the ESP within a second of send(). That goal (p99 ≤ 1 s) is `pnpm bench`'s
// `priority` row; on a loaded machine this test holds guard-rails: OTPs queued behind the
// newsletter (1,000 at 50/s: 20 s) or a starved newsletter fail it.
const fleet = useFleet({
  schedulers: 1,
  workers: 2,
  scenario: { default: { latencyMs: 10 } },
  config: { providers: { ses: { kind: 'ses', sandbox: true, rate: 50, burst: 10, concurrency: 16 } } },
});

it('gets OTPs through ahead of bulk mail that saturates the provider', async () => {
  await fleet().client.campaigns.create({ id: 'flood', priority: 'low' });
  await fleet().client.sendBulk(
    Array.from({ length: 1000 }, (_, i) => ({
      from: 'news@acme.test',
      to: `n${i}@bulk.test`,
      subject: 'news',
      text: 'hello',
      campaignId: 'flood',
    })),
  );
  // Let the newsletter fill the provider's shared slice before the OTPs start.
  await waitFor(() => fleet().sandbox.accepted().length >= 60, 10_000, 'bulk flowing');

  const sentAt = new Map<string, number>();
  for (let i = 0; i < 40; i++) {
    const t = Date.now();
    const { id } = await fleet().client.send({
      from: 'auth@acme.test',
      to: `otp${i}@users.test`,
      subject: 'Your code',
      text: `${100000 + i}`,
      priority: 'critical',
    });
    sentAt.set(id, t);
    await new Promise((r) => setTimeout(r, 200));
  }
  await waitFor(
    () =>
      fleet()
        .sandbox.accepted()
        .filter((a) => a.domain === 'users.test').length >= 40,
    10_000,
    'OTPs accepted',
  );

  const accepted = fleet().sandbox.accepted();
  const latencies = accepted
    .filter((a) => a.domain === 'users.test')
    .map((a) => a.arrivedAt - sentAt.get(a.sluiceId!)!)
    .sort((a, b) => a - b);
  const p50 = latencies[Math.floor(latencies.length * 0.5)]!;
  const p99 = latencies[Math.ceil(latencies.length * 0.99) - 1]!;

  // The provider stayed saturated by bulk mail the whole time the OTPs were going.
  const first = Math.min(...sentAt.values());
  const last = Math.max(...sentAt.values());
  const bulkDuring = accepted.filter(
    (a) => a.domain === 'bulk.test' && a.arrivedAt >= first && a.arrivedAt <= last,
  ).length;
  const bulkRate = bulkDuring / ((last - first) / 1000);
  console.log(
    `priority: OTP p50 ${p50} ms, p99 ${p99} ms, max ${latencies.at(-1)} ms; bulk meanwhile ${bulkRate.toFixed(1)}/s`,
  );
  // Bulk may use the shared 80%; beside the OTPs it still flows (19/s measured on a loaded
  // 2-core machine; the goal of 90% of the 80% is the bench's). Starved, it stops.
  expect(bulkRate).toBeGreaterThanOrEqual(0.2 * 0.8 * 50);
  expect(p99).toBeLessThan(5000);
});
