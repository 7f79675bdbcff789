import { expect, it } from 'vitest';
import { governorDecisions, mean, sleep, sum } from './support/convergence.js';
import { waitFor } from './support/fleet.js';
import { useFleet } from './support/use-fleet.js';

// An ESP whose real limit is below what Sluice was told: SES configured at 80/s takes 30/s and
// answers the rest with HTTP 429 (the sandbox's SES throttles the domain behind it at 30/s,
// which is what the account's real rate looks like on the wire). With the default rules the
// provider must settle just under 30/s like a receiver does (a proportional cut, additive
// recovery), not saw between a halved rate and a doubling back; and a second provider's
// receiver keeps its own pace meanwhile. Goals (≥ 90% of 30/s, ≤ 5% refused) are printed;
// the bounds are guard-rails for a loaded 2-core machine (the sawtooth this replaces held
// 12.5–25% of the configured rate, 10–20/s, with a burst of 429s each cycle).
const CAPACITY = 30;
const OTHER = 20;
const fleet = useFleet({
  schedulers: 1,
  workers: 2,
  scenario: { domains: { 'esp.test': { rate: CAPACITY, burst: 10 } } },
  config: {
    providers: {
      ses: { kind: 'ses', sandbox: true, rate: 80, burst: 8, concurrency: 16 },
      relay: { kind: 'smtp', sandbox: true, rate: 400, burst: 40, concurrency: 16 },
    },
    routes: { 'via-ses': [{ provider: 'ses', weight: 1 }], 'via-relay': [{ provider: 'relay', weight: 1 }] },
    receivers: [{ name: 'other', domains: ['other.test'], rate: OTHER, burst: 2 }],
    delivery: { retry: { throttled: { baseMs: 500, maxMs: 2_000 } } },
  },
});

it('settles an ESP under its real limit, and leaves another provider’s receivers their pace', async () => {
  const { client, sandbox } = fleet();
  const mail = (domain: string, stream: string, n: number) =>
    Array.from({ length: n }, (_, i) => ({
      from: 'news@acme.test',
      to: `r${i}@${domain}`,
      subject: 'news',
      text: 'hello',
      priority: 'low' as const,
      stream,
    }));
  await client.sendBulk([...mail('esp.test', 'via-ses', 1_400), ...mail('other.test', 'via-relay', 800)]);

  const seen = (domain: string) => sandbox.stats().byDomain[domain] ?? { accepted: 0, throttled: 0 };
  await waitFor(() => seen('esp.test').accepted + seen('esp.test').throttled > 0, 30_000, 'the first attempt');
  const seconds: { accepted: number; refused: number; other: number }[] = [];
  let last = { esp: seen('esp.test'), other: seen('other.test') };
  const started = Date.now();
  for (let t = 0; t < 30; t++) {
    await sleep(started + (t + 1) * 1000 - Date.now());
    const now = { esp: seen('esp.test'), other: seen('other.test') };
    seconds.push({
      accepted: now.esp.accepted - last.esp.accepted,
      refused: now.esp.throttled - last.esp.throttled,
      other: now.other.accepted - last.other.accepted,
    });
    last = now;
  }
  const log = await governorDecisions(fleet().redis, fleet().prefix);
  const cuts = log.filter((d) => d.action === 'lower' && d.scope === 'provider' && d.name === 'ses');
  const steady = seconds.slice(8);
  const accepted = mean(steady.map((s) => s.accepted));
  const refusedShare = sum(steady.map((s) => s.refused)) / sum(steady.map((s) => s.accepted + s.refused));
  const other = mean(steady.map((s) => s.other));
  console.log(
    `provider convergence (SES told 80/s, takes ${CAPACITY}/s), accepted/refused per second: ${seconds.map((s) => `${s.accepted}/${s.refused}`).join(' ')}; ` +
      `cuts at ${cuts.map((d) => `${((d.at - started) / 1000).toFixed(1)} s → ${d.to}`).join(', ')}; ` +
      `settled from 8 s: ${accepted.toFixed(1)}/s (goal ≥ ${CAPACITY * 0.9}/s), ${(refusedShare * 100).toFixed(1)}% refused (goal ≤ 5%), ` +
      `the other provider's receiver ${other.toFixed(1)}/s of ${OTHER}/s (goal ≥ ${OTHER * 0.9}/s)`,
  );
  // The governor, not backpressure alone, paces the provider: cut in proportion, early, once the
  // ESP refused enough for the rule (3% over 3 s, at least 20 sends). On a machine loaded so much
  // that the fleet never reached the ESP's limit there is nothing to cut; the rate and refused
  // share below still hold it to the goal then.
  const firstRefusal = seconds.findIndex((s) => s.refused > 0);
  if (sum(seconds.map((s) => s.refused)) >= 20) {
    expect(cuts.length, 'the governor cut the provider after the ESP refused').toBeGreaterThanOrEqual(1);
    expect(cuts[0]!.at - started - firstRefusal * 1000).toBeLessThan(8_000);
  }
  expect(accepted).toBeGreaterThanOrEqual(CAPACITY * 0.7);
  expect(refusedShare).toBeLessThanOrEqual(0.2);
  expect(other).toBeGreaterThanOrEqual(OTHER * 0.75);
}, 90_000);
