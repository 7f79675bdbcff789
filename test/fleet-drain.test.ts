import { expect, it } from 'vitest';
import { waitFor } from './support/fleet.js';
import { freePort } from './support/redis-server.js';
import { useFleet } from './support/use-fleet.js';

// What Kubernetes does to a worker in a rollout or a scale-in, under load: SIGTERM. Its
// /readyz must turn 503 at once (the pod leaves the ready count), the sends it has in flight
// (800 ms each at this receiver) must finish within worker.drainTimeoutMs, far below the grace
// period, and the process exit; every message is then sent once, by whichever worker took it.
const N = 400;
const DRAIN_MS = 5_000;
const fleet = useFleet({
  schedulers: 1,
  workers: 0,
  scenario: { domains: { 'example.test': { latencyMs: 800 } } },
  config: {
    providers: { ses: { kind: 'ses', sandbox: true, rate: 200, burst: 20, concurrency: 64 } },
    worker: { concurrency: { critical: 4, high: 4, normal: 16, low: 4 }, drainTimeoutMs: DRAIN_MS },
  },
});

const readyz = async (port: number): Promise<number> => {
  const res = await fetch(`http://127.0.0.1:${port}/readyz`).catch(() => undefined);
  await res?.body?.cancel();
  return res?.status ?? 0;
};

it('SIGTERM under load: readiness off at once, sends in flight finish within the drain, none lost or twice', async () => {
  const f = fleet();
  const ports = [await freePort(), await freePort()];
  const [leaving] = await Promise.all(ports.map((p) => f.startWorker({ env: { SLUICE_HEALTH_PORT: String(p) } })));
  await waitFor(async () => (await Promise.all(ports.map(readyz))).every((s) => s === 200), 10_000, 'both ready');

  const sent = await f.client.sendBulk(
    Array.from({ length: N }, (_, i) => ({
      from: 'app@acme.test',
      to: `r${i}@example.test`,
      subject: 'hi',
      text: 'hello',
    })),
  );
  await waitFor(() => f.sandbox.accepted().length >= 60, 30_000, '60 sent');

  // Readiness, asked every 20 ms from the signal on.
  const signalled = Date.now();
  let notReadyAt: number | undefined;
  const watching = (async () => {
    while (notReadyAt === undefined && Date.now() - signalled < 10_000) {
      if ((await readyz(ports[0]!)) !== 200) notReadyAt = Date.now();
      else await new Promise((r) => setTimeout(r, 20));
    }
  })();
  const code = await leaving!.stop('SIGTERM');
  const exitedMs = Date.now() - signalled;
  await watching;
  const acceptedAtExit = f.sandbox.accepted().length;

  await waitFor(() => f.sandbox.accepted().length >= N, 60_000, `${N} sent`);
  const records = await waitFor(
    async () => {
      const all = await Promise.all(sent.map((s) => f.client.messages.status(s.id)));
      return all.every((r) => r?.state === 'sent') ? all : null;
    },
    30_000,
    'every record sent',
  );
  const ids = f.sandbox.accepted().map((a) => a.sluiceId);
  console.log(
    `drain under load: /readyz 503 ${notReadyAt! - signalled} ms after SIGTERM, exit ${code} after ${exitedMs} ms ` +
      `(drain bound ${DRAIN_MS} ms), ${acceptedAtExit} of ${N} sent by then; ${new Set(ids).size} distinct of ${ids.length} sent`,
  );
  expect(notReadyAt! - signalled).toBeLessThan(500);
  expect(code).toBe(0);
  // Its sends in flight (800 ms each) finished: it left before the drain's bound, not at it.
  expect(exitedMs).toBeLessThan(DRAIN_MS);
  expect(leaving!.output()).not.toContain('drain timed out');
  expect(ids.length).toBe(N);
  expect(new Set(ids).size).toBe(N);
  expect(records.filter((r) => r?.ambiguous !== 0)).toEqual([]);
}, 120_000);
