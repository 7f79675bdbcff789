import { expect, it } from 'vitest';
import { waitFor } from './support/fleet.js';
import { useFleet } from './support/use-fleet.js';

// The slow receiver takes 5/s and low mail lives 8 s: its 60 recipients need 12 s, so the
// launch is split into two waves 6 s apart (approved at once: `launch.approval: auto`).
const fleet = useFleet({
  schedulers: 1,
  workers: 1,
  config: {
    providers: { ses: { kind: 'ses', sandbox: true, rate: 200, burst: 20 } },
    organisations: { builtIn: false },
    reserves: { critical: 0 },
    receivers: [{ name: 'slow', domains: ['slow.test'], rate: 5, burst: 1 }],
    delivery: { lifetimeMs: { critical: 60_000, high: 60_000, normal: 60_000, low: 8_000 } },
    launch: { approval: 'auto' },
    governor: { intervalMs: 200 },
  },
});

it('a split launch is injected wave by wave, each when its time comes', async () => {
  const { client, sandbox } = fleet();
  await client.campaigns.create({ id: 'waves', content: { from: 'a@acme.test', subject: 'Hi', text: 'x' } });
  const launch = await client.campaigns.launch('waves', { total: 60, domains: { 'slow.test': 60 } });
  expect(launch.decision).toMatchObject({ kind: 'split' });
  const waves = launch.decision!.waves!;
  expect(waves).toHaveLength(2);
  const reports: { position: number; waiting: string | undefined; at: number }[] = [];
  await client.campaigns.inject(
    'waves',
    Array.from({ length: 60 }, (_, i) => ({ to: `u${i}@slow.test` })),
    {
      chunkSize: 10,
      onProgress: (p) => reports.push({ position: p.cursor.position, waiting: p.waiting, at: Date.now() }),
    },
  );
  // The first wave went in at once; the injection then waited for the second wave's time.
  const firstWait = reports.find((r) => r.waiting === 'launch')!;
  expect(firstWait.position).toBe(waves[0]!.upTo);
  const second = await client.messages.status(`waves_${waves[0]!.upTo}`);
  expect(second!.createdAt).toBeGreaterThanOrEqual(waves[1]!.atMs);
  // Every recipient is sent, none expired: each wave fits within the lifetime.
  await waitFor(async () => (await client.campaigns.status('waves')).pending === 0, 30_000, 'all final');
  expect((await client.campaigns.status('waves')).counts).toMatchObject({ accepted: 60, sent: 60, expired: 0 });
  expect(sandbox.accepted().filter((a) => a.domain === 'slow.test')).toHaveLength(60);
});
