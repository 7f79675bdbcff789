import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { startFleet, waitFor, type Fleet } from '../support/fleet.js';
import { auditFigures, auditMessages, waitUntilFinal } from '../support/faults-audit.js';
import { faultsSeed, reportFaults, seededRandom } from '../support/faults-report.js';
import { startRedisServer, type RedisServer } from '../support/redis-server.js';

// Redis SIGKILLed mid-run and started again on the same port and data directory: every
// send() that resolved (before the kill or after the restart) must end sent, at the sandbox
// once unless its record counts an ambiguous attempt, and mail must flow again soon after
// Redis is back.
//
// The server keeps an append-only file with `appendfsync always`: Redis then writes and
// fsyncs every write before it answers, so an acknowledged send is on disk whatever the
// kill, and a loss is Sluice's. infra/redis.conf ships `everysec`, which loses nothing to a
// process kill either (the write has reached the kernel before the answer), except when an
// fsync stalls over 2 s and Redis answers before it writes: on a shared CI disk, a loss the
// test would blame on Sluice.
const seed = faultsSeed('redis-restart');
const random = seededRandom(seed);

/** Concurrent producers, each sending one message every 25-50 ms. */
const PRODUCERS = 4;

let server: RedisServer | undefined;
let fleet: Fleet | undefined;

beforeAll(async () => {
  server = await startRedisServer({ appendfsync: 'always' });
  fleet = await startFleet({
    redisUrl: server.url,
    apps: inject('apps'),
    schedulers: 1,
    workers: 2,
    scenario: { default: { latencyMs: 20 } },
    // Slower than the producers, so a backlog is queued and due when Redis dies.
    config: {
      providers: { ses: { kind: 'ses', sandbox: true, rate: 60, burst: 10, concurrency: 16 } },
      organisations: { builtIn: false },
    },
  });
});

afterAll(async () => {
  await fleet?.stop();
  await server?.stop();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Sends from a few concurrent loops until stopped; only sends that resolved are acknowledged. */
function produce(f: Fleet) {
  const acknowledged: string[] = [];
  let refused = 0;
  let producing = true;
  let n = 0;
  // Pauses drawn up front, so the seed alone decides them whatever the timing of the run.
  const pauses = Array.from({ length: 1_000 }, () => 25 + random() * 25);
  const loop = async () => {
    while (producing) {
      const to = `r${n++}@example.test`;
      try {
        acknowledged.push((await f.client.send({ from: 'app@acme.test', to, subject: 'hi', text: 'hello' })).id);
      } catch {
        refused++; // Redis is down: not acknowledged, so not ours to check.
      }
      await sleep(pauses[n % pauses.length]!);
    }
  };
  const loops = Array.from({ length: PRODUCERS }, loop);
  return {
    acknowledged,
    refused: () => refused,
    async stop() {
      producing = false;
      await Promise.all(loops);
    },
  };
}

it('loses no acknowledged send and resumes once Redis is back after a SIGKILL', async () => {
  const f = fleet!;
  const producer = produce(f);
  let beforeKill = 0;
  let killedAt = 0;
  let backAt = 0;
  let recoverySeconds = Number.NaN;
  try {
    await waitFor(() => f.sandbox.stats().accepted >= 30, 60_000, 'sending under way');
    await sleep(500 + random() * 1_000);
    beforeKill = producer.acknowledged.length;
    await server!.kill('SIGKILL');
    killedAt = Date.now();
    await sleep(500 + random() * 1_000);
    await server!.restart();
    backAt = Date.now();
    const first = await waitFor(
      () => f.sandbox.accepted().find((a) => a.arrivedAt > backAt)?.arrivedAt,
      60_000,
      'a send after Redis is back',
    );
    recoverySeconds = (first - backAt) / 1000;
    await sleep(2_000); // sends acknowledged after the restart count too
  } catch (err) {
    const { accepted } = f.sandbox.stats();
    console.log(
      `redis-restart: ${producer.acknowledged.length} acknowledged, ${producer.refused()} refused, ${accepted} at the sandbox`,
    );
    throw err;
  } finally {
    await producer.stop();
  }

  const ids = producer.acknowledged;
  await waitUntilFinal(f, ids, 60_000);
  const audit = await auditMessages(f, ids, () => 'sent');
  reportFaults('redis-restart', {
    kills: 1,
    ...auditFigures(audit),
    recoverySeconds: Math.round(recoverySeconds * 100) / 100,
    acknowledged: ids.length,
    acknowledgedBeforeKill: beforeKill,
    refusedSends: producer.refused(),
    downSeconds: Math.round((backAt - killedAt) / 100) / 10,
    seed,
  });
  console.log(`redis-restart: final states ${JSON.stringify(audit.byState)}`);

  expect(beforeKill).toBeGreaterThan(0);
  expect(audit.stuck).toEqual([]);
  expect(audit.lost).toEqual([]);
  expect(audit.unexpected).toEqual([]);
  expect(audit.duplicatesUnflagged).toEqual([]);
  // A guard-rail, not a goal: the fleet reconnects by itself (issue 12 measured 0.4 s).
  expect(recoverySeconds).toBeLessThan(15);
});
