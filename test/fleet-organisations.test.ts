import { afterAll, expect, it } from 'vitest';
import { maxInWindow, peakGuard, waitFor } from './support/fleet.js';
import { startDnsServer } from './support/dns-server.js';
import { useFleet } from './support/use-fleet.js';

// Receiver organisations: gmail.test and 20 Workspace domains all have Google's MX hosts,
// so they share the one policy that names Google; other.test has its own MX and no policy.
const GOOGLE = { rate: 20, burst: 5 };
const WORKSPACES = Array.from({ length: 20 }, (_, i) => `workspace-${i}.test`);
const GOOGLE_DOMAINS = ['gmail.test', ...WORKSPACES];
const TO_GOOGLE = 200;
const TO_OTHER = 100;

const dns = await startDnsServer({
  'gmail.test': { mx: [{ priority: 5, exchange: 'gmail-smtp-in.l.google.com.' }] },
  ...Object.fromEntries(
    WORKSPACES.map((d, i) => [
      d,
      {
        mx:
          i % 2
            ? [{ priority: 1, exchange: 'smtp.google.com.' }]
            : [
                { priority: 1, exchange: 'ASPMX.L.GOOGLE.COM.' },
                { priority: 5, exchange: 'ALT1.ASPMX.L.GOOGLE.COM.' },
              ],
      },
    ]),
  ),
  'other.test': { mx: [{ priority: 10, exchange: 'mx.other.test.' }] },
});
afterAll(() => dns.close());

const fleet = useFleet({
  schedulers: 1,
  workers: 2,
  scenario: { default: { latencyMs: 5 } },
  config: {
    providers: { ses: { kind: 'ses', sandbox: true, rate: 100, burst: 20, concurrency: 32 } },
    receivers: [{ name: 'google', organisation: 'google', ...GOOGLE }],
    organisations: { dnsServers: [dns.address] },
    reserves: { critical: 0 },
  },
});

it('holds every domain with Google’s MX hosts to Google’s one limit, and no other domain', async () => {
  // Warm the fleet so the measured seconds are Sluice's, then let the buckets go idle.
  for (let i = 0; i < 4; i++)
    await fleet().client.send({ from: 'news@acme.test', to: `w${i}@warm.test`, subject: 'warm', text: 'up' });
  await waitFor(() => fleet().sandbox.accepted().length >= 4, 10_000, 'warm-up');
  await new Promise((r) => setTimeout(r, 1500));

  await fleet().client.campaigns.create({ id: 'orgs', priority: 'low' });
  const messages = [
    ...Array.from({ length: TO_GOOGLE }, (_, i) => `g${i}@${GOOGLE_DOMAINS[i % GOOGLE_DOMAINS.length]}`),
    ...Array.from({ length: TO_OTHER }, (_, i) => `o${i}@other.test`),
  ].map((to) => ({ from: 'news@acme.test', to, subject: 'news', text: 'hello', campaignId: 'orgs' }));
  await fleet().client.sendBulk(messages);
  await waitFor(() => fleet().sandbox.accepted().length >= TO_GOOGLE + TO_OTHER + 4, 30_000, 'all accepted');

  const accepted = fleet()
    .sandbox.accepted()
    .filter((a) => a.domain !== 'warm.test');
  const google = accepted.filter((a) => GOOGLE_DOMAINS.includes(a.domain)).map((a) => a.arrivedAt);
  const other = accepted.filter((a) => a.domain === 'other.test').map((a) => a.arrivedAt);
  const googlePeak = maxInWindow(google);
  const otherPeak = maxInWindow(other);
  // The domains' own peaks: each alone is far below Google's limit, so only a shared bucket
  // explains the sum being held.
  const domainPeak = Math.max(
    ...GOOGLE_DOMAINS.map((d) => maxInWindow(accepted.filter((a) => a.domain === d).map((a) => a.arrivedAt))),
  );
  console.log(
    `organisations: google peak ${googlePeak}/s over ${GOOGLE_DOMAINS.length} domains (limit ${GOOGLE.rate}+${GOOGLE.burst}), ` +
      `busiest single domain ${domainPeak}/s, other.test peak ${otherPeak}/s, ` +
      `google span ${((Math.max(...google) - Math.min(...google)) / 1000).toFixed(1)} s, DNS queries ${dns.queries()}`,
  );
  expect(google).toHaveLength(TO_GOOGLE);
  expect(other).toHaveLength(TO_OTHER);
  expect(googlePeak).toBeLessThanOrEqual(peakGuard(GOOGLE.rate, GOOGLE.burst));
  expect(otherPeak).toBeGreaterThan(2 * (GOOGLE.rate + GOOGLE.burst));
  expect(fleet().sandbox.stats()).toMatchObject({ accepted: TO_GOOGLE + TO_OTHER + 4, duplicates: 0 });
  // One scheduler, one lookup per domain: the cache answers every other message.
  expect(dns.queries()).toBeLessThanOrEqual(GOOGLE_DOMAINS.length + 2);
});
