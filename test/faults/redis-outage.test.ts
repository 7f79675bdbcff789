import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startFleet, waitFor, type Fleet } from '../support/fleet.js';
import { auditFigures, auditMessages, waitUntilFinal } from '../support/faults-audit.js';
import { faultsOutageMs } from '../support/faults-outage.js';
import { faultsSeed, reportFaults, seededRandom } from '../support/faults-report.js';
import { startRedisServer, type RedisServer } from '../support/redis-server.js';

// Redis out of reach while mail is queued and due. Workers must fail closed: nothing reaches
// the sandbox that Sluice cannot record (and no token can be taken), and once Redis is back
// the backlog goes out, nothing lost or doubled.
//
// The outage is a stop: Redis shuts down (SIGTERM, its append-only file written out) and
// starts again on the same port and data 30 s later, so the fleet sees what "Redis is
// down" means in production: connections refused. A frozen Redis (SIGSTOP) is another
// fault: connections stay open and commands hang, nothing is refused. The second test
// freezes it for 3 s, under the fleet's 4 s job lock, so it shows hanging commands only (a
// freeze past the lock is a lost worker as well, the crash storm's subject).
//
// A send whose record was moved to `sending` before Redis went has been recorded and goes
// out: arrivals count as during the outage from `GRACE_MS` after it began.
const seed = faultsSeed('redis-outage');
const random = seededRandom(seed);
const OUTAGE_MS = faultsOutageMs();
const FREEZE_MS = 3_000;
const GRACE_MS = 1_000;

let server: RedisServer | undefined;
let fleet: Fleet | undefined;

beforeAll(async () => {
  // A graceful stop writes the whole file, so the shipped policy (infra/redis.conf) is enough.
  server = await startRedisServer({ appendfsync: 'everysec' });
  fleet = await startFleet({
    redisUrl: server.url,
    apps: inject('apps'),
    schedulers: 1,
    workers: 2,
    scenario: { default: { latencyMs: 20 } },
    config: {
      providers: { ses: { kind: 'ses', sandbox: true, rate: 40, burst: 10, concurrency: 16 } },
      organisations: { builtIn: false },
    },
  });
  // The test's own connection would print every failed reconnect.
  fleet.redis.on('error', () => {});
});

afterAll(async () => {
  await fleet?.stop();
  await server?.stop();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const arrivalsBetween = (f: Fleet, from: number, to: number) =>
  f.sandbox.accepted().filter((a) => a.arrivedAt > from && a.arrivedAt < to).length;

/** Queues `n` messages (seeded recipients) and waits until `min` of them are at the sandbox. */
async function queueAndStart(f: Fleet, n: number, min: number): Promise<string[]> {
  const base = f.sandbox.stats().accepted;
  const sent = await f.client.sendBulk(
    Array.from({ length: n }, (_, i) => ({
      from: 'app@acme.test',
      to: `r${i}-${Math.floor(random() * 1e9)}@example.test`,
      subject: 'hi',
      text: 'hello',
    })),
  );
  await waitFor(() => f.sandbox.stats().accepted - base >= min, 60_000, 'sending under way');
  return sent.map((s) => s.id);
}

/** After the fault: every message final and sent once (unless flagged), and the figures. */
async function settle(f: Fleet, ids: string[], name: string, figures: Record<string, number>) {
  await waitUntilFinal(f, ids, 60_000);
  const audit = await auditMessages(f, ids, () => 'sent');
  reportFaults(name, { ...auditFigures(audit), ...figures, messages: ids.length, seed });
  console.log(`${name}: final states ${JSON.stringify(audit.byState)}`);
  expect(audit.stuck).toEqual([]);
  expect(audit.lost).toEqual([]);
  expect(audit.unexpected).toEqual([]);
  expect(audit.duplicatesUnflagged).toEqual([]);
}

describe('Redis out of reach', () => {
  it(`sends nothing while Redis is stopped for ${OUTAGE_MS / 1000} s, then sends the backlog once`, async () => {
    const f = fleet!;
    // At 40/s, about 6 s of mail: most of it is due during the outage.
    const ids = await queueAndStart(f, 240, 20);
    const stoppedAt = Date.now();
    await server!.kill('SIGTERM');
    await sleep(OUTAGE_MS);
    await server!.restart();
    const backAt = Date.now();
    const during = arrivalsBetween(f, stoppedAt + GRACE_MS, backAt);
    const first = await waitFor(
      () => f.sandbox.accepted().find((a) => a.arrivedAt > backAt)?.arrivedAt,
      60_000,
      'a send after Redis is back',
    );
    const recoverySeconds = Math.round((first - backAt) / 10) / 100;

    await settle(f, ids, 'redis-outage', {
      arrivalsDuringOutage: during,
      recoverySeconds,
      arrivalsInGrace: arrivalsBetween(f, stoppedAt, stoppedAt + GRACE_MS),
      outageSeconds: Math.round((backAt - stoppedAt) / 100) / 10,
    });
    expect(during).toBe(0);
    // A guard-rail, not a goal: reconnecting is the processes' own doing (issue 12 measured < 1 s).
    expect(recoverySeconds).toBeLessThan(20);
  });

  it(`sends nothing while Redis is frozen for ${FREEZE_MS / 1000} s (SIGSTOP), then goes on`, async () => {
    const f = fleet!;
    const ids = await queueAndStart(f, 120, 20);
    const frozenAt = Date.now();
    await server!.kill('SIGSTOP');
    await sleep(FREEZE_MS);
    await server!.kill('SIGCONT');
    const backAt = Date.now();
    const during = arrivalsBetween(f, frozenAt + GRACE_MS, backAt);
    const first = await waitFor(
      () => f.sandbox.accepted().find((a) => a.arrivedAt > backAt)?.arrivedAt,
      60_000,
      'a send after Redis runs again',
    );
    const recoverySeconds = Math.round((first - backAt) / 10) / 100;

    await settle(f, ids, 'redis-freeze', { arrivalsDuringOutage: during, recoverySeconds });
    expect(during).toBe(0);
    expect(recoverySeconds).toBeLessThan(20);
  });
});
