import { expect, it } from 'vitest';
import { maxInWindow, peakGuard, waitFor } from './support/fleet.js';
import { useFleet } from './support/use-fleet.js';

// With no worker running, the scheduler still admits mail into slots that pass unused.
// When workers come back, those stale slots must not all go out at once.
const fleet = useFleet({
  schedulers: 1,
  workers: 0,
  config: {
    providers: { ses: { kind: 'ses', sandbox: true, rate: 20, burst: 10, concurrency: 8 } },
    reserves: { critical: 0 },
  },
});

it('does not burst admitted mail whose slots passed while no worker ran', async () => {
  await fleet().client.campaigns.create({ id: 'outage', priority: 'low' });
  const sent = await fleet().client.sendBulk(
    Array.from({ length: 120 }, (_, i) => ({
      from: 'news@acme.test',
      to: `o${i}@x.test`,
      subject: 's',
      text: 't',
      campaignId: 'outage',
    })),
  );
  await new Promise((r) => setTimeout(r, 4000)); // ~80 slots come and go
  await fleet().startWorker();
  await waitFor(() => fleet().sandbox.stats().accepted >= 120, 30_000, 'all sent');

  const times = fleet()
    .sandbox.accepted()
    .map((a) => a.arrivedAt);
  console.log(`outage: peak ${maxInWindow(times)}/s after the workers came back (limit 20 + 10)`);
  expect(maxInWindow(times)).toBeLessThanOrEqual(peakGuard(20, 10)); // the ~80 stale slots at once would be far over
  const ids = fleet()
    .sandbox.accepted()
    .map((a) => a.sluiceId);
  expect(new Set(ids).size).toBe(120);
  expect(ids.length).toBe(120);
  const records = await Promise.all(sent.map((s) => fleet().client.messages.status(s.id)));
  expect(records.every((r) => r?.state === 'sent')).toBe(true);
});
