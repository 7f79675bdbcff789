import { expect, it } from 'vitest';
import { waitFor } from './support/fleet.js';
import { metricsUrl, sampleSum } from './support/scrape.js';
import { useFleet } from './support/use-fleet.js';

// What workers scale on (`sluice_admissible_work`, scraped from the scheduler as Prometheus
// and KEDA do): mail a worker could send now or within the horizon. It must grow while workers
// fall behind what the limiter admits, fall when workers are added, and stay flat, near what
// the limit books ahead, while a receiver's limit holds a backlog (more workers would not send
// it any faster). One worker sends 2 at a time at 100 ms each (≈ 20/s) of a provider that
// takes 50/s.
const PROVIDER_RATE = 50;
const SLOW_RATE = 5;
const fleet = useFleet({
  schedulers: 1,
  workers: 1,
  scenario: { domains: { 'example.test': { latencyMs: 100 } } },
  config: {
    metrics: { port: 0 },
    providers: { ses: { kind: 'ses', sandbox: true, rate: PROVIDER_RATE, burst: 5, concurrency: 64 } },
    receivers: [{ name: 'slow', domains: ['slow.test'], rate: SLOW_RATE, burst: 1 }],
    worker: { concurrency: { critical: 2, high: 2, normal: 2, low: 2 } },
  },
});

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const mail = (domain: string, n: number) =>
  Array.from({ length: n }, (_, i) => ({
    from: 'news@acme.test',
    to: `r${i}@${domain}`,
    subject: 'news',
    text: 'hello',
    priority: 'low' as const,
  }));

it('rises with a backlog workers can send, falls as workers are added, and stays flat while a receiver’s limit holds one', async () => {
  const f = fleet();
  const url = metricsUrl(f.processes.find((p) => p.name.startsWith('scheduler'))!);
  const read = async (): Promise<{ work: number; queued: number }> => {
    const text = await (await fetch(url)).text();
    return {
      work: sampleSum(text, 'sluice_admissible_work', { pool: 'default' }),
      queued: sampleSum(text, 'sluice_queue_waiting') + sampleSum(text, 'sluice_queue_delayed'),
    };
  };
  const series = async (seconds: number): Promise<{ work: number; queued: number }[]> => {
    const out = [];
    for (let s = 0; s < seconds; s++) {
      await sleep(1_000);
      out.push(await read());
    }
    return out;
  };
  expect((await read()).work).toBe(0);

  // A backlog the provider's 50/s would send, on one worker of ≈ 20/s.
  await f.client.sendBulk(mail('example.test', 400));
  const behind = await series(5);
  // Two more workers (≈ 60/s in all, above what the limiter admits).
  await Promise.all([f.startWorker(), f.startWorker()]);
  const added = await series(6);
  await waitFor(() => f.sandbox.accepted().length >= 400, 30_000, '400 sent');
  await waitFor(async () => (await read()).work === 0, 10_000, 'no admissible work once sent');

  // A backlog only a receiver's 5/s lets through: plenty of workers, nothing more to send.
  await f.client.sendBulk(mail('slow.test', 200));
  await sleep(2_000);
  const held = await series(6);

  const fmt = (xs: { work: number; queued: number }[]) => xs.map((x) => `${x.work}/${x.queued}`).join(' ');
  console.log(
    `admissible work (admissible/queued a second): one worker ${fmt(behind)}; three workers ${fmt(added)}; ` +
      `held by a receiver at ${SLOW_RATE}/s ${fmt(held)}`,
  );
  const works = (xs: { work: number }[]) => xs.map((x) => x.work);
  // Rises while one worker falls behind: ≈ 30/s more each second.
  expect(behind.at(-1)!.work).toBeGreaterThan(behind[0]!.work);
  expect(behind.at(-1)!.work).toBeGreaterThanOrEqual(60);
  // Falls once workers are added: well below its peak within six seconds.
  const peak = Math.max(...works(behind), ...works(added));
  expect(added.at(-1)!.work).toBeLessThan(peak / 2);
  // Flat while the receiver holds the backlog: about what 5/s books within the 1 s horizon
  // (plus a burst and sends in flight), never the queue, and not growing.
  expect(Math.max(...works(held))).toBeLessThanOrEqual(SLOW_RATE * 3);
  expect(Math.max(...works(held)) - Math.min(...works(held))).toBeLessThanOrEqual(SLOW_RATE * 2);
  expect(Math.min(...held.map((x) => x.queued))).toBeGreaterThanOrEqual(100);
}, 120_000);
