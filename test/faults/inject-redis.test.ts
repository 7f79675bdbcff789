import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { createClient } from '@sluice/client';
import { startFleet, waitFor, type Fleet } from '../support/fleet.js';
import { auditFigures, auditMessages, waitUntilFinal } from '../support/faults-audit.js';
import { faultsSeed, reportFaults, seededRandom } from '../support/faults-report.js';
import { startRedisServer, type RedisServer } from '../support/redis-server.js';

// Redis SIGKILLed twice during a campaign injection and started again on its AOF
// (`appendfsync always`: an acknowledged write is on disk), each time for longer than the
// producer's client waits for Redis (`timeoutMs`, 1 s here), so its injection fails
// (`redis_unavailable`) instead of riding the outage out. The producer resumes each time
// from the campaign's cursor, with its source reopened there, as a backend would: every
// position must be sent once (flagged ambiguous aside), none lost, and the cursor never goes
// back.
const seed = faultsSeed('inject-redis');
const random = seededRandom(seed);
const COUNT = 4_000;
const KILLS = 2;

let server: RedisServer | undefined;
let fleet: Fleet | undefined;

beforeAll(async () => {
  server = await startRedisServer({ appendfsync: 'always' });
  fleet = await startFleet({
    redisUrl: server.url,
    apps: inject('apps'),
    schedulers: 1,
    workers: 1,
    scenario: { default: { latencyMs: 5 } },
    config: {
      providers: { ses: { kind: 'ses', sandbox: true, rate: 400, burst: 40 } },
      defaults: { campaign: { rate: 1_000 } },
      organisations: { builtIn: false },
      injection: { aheadMs: 2_000, minWindow: 300, maxWindow: 1_500 },
    },
  });
});

afterAll(async () => {
  await fleet?.stop();
  await server?.stop();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function* list(from: number) {
  for (let i = from; i < COUNT; i++) yield { to: `u${i}@d${i % 7}.test`, data: { n: i }, cursor: i };
}

it('an injection that Redis dies under resumes from its cursor: every recipient sent once', async () => {
  const f = fleet!;
  const producer = createClient({ redis: server!.url, prefix: f.prefix, timeoutMs: 1_000 });
  await f.client.campaigns.create({ id: 'inj', content: { from: 'a@acme.test', subject: 'N{{n}}', text: 'x' } });
  await f.client.campaigns.launch('inj', { total: COUNT, sample: { 'd0.test': 1 } });
  // The fleet's window in force (its first write comes with the scheduler's campaign poll), so
  // the injection is paced by the sends and Redis dies under it, not after it.
  await waitFor(async () => (await f.client.campaigns.status('inj')).window.max === 1_500, 10_000, 'the window');
  const cursors: number[] = [];
  let failures = 0;
  let kills = 0;
  const killer = (async () => {
    for (; kills < KILLS; kills++) {
      await waitFor(
        async () => (await f.client.campaigns.status('inj').catch(() => undefined))?.cursor.position ?? 0,
        60_000,
        'injection under way',
      );
      await sleep(300 + random() * 1_000);
      await server!.kill('SIGKILL');
      await sleep(1_500 + random() * 1_000);
      await server!.restart();
    }
  })();
  for (;;) {
    const { position: at } = await waitFor(
      async () => (await f.client.campaigns.status('inj').catch(() => undefined))?.cursor,
      60_000,
      'the cursor readable',
    );
    cursors.push(at);
    try {
      await producer.campaigns.inject('inj', list(at), { from: at });
      break;
    } catch (error) {
      failures++;
      if ((error as { code?: string }).code !== 'redis_unavailable') throw error;
      await sleep(200);
    }
  }
  await killer;
  await producer.close();
  const ids = Array.from({ length: COUNT }, (_, i) => `inj_${i}`);
  await waitUntilFinal(f, ids, 120_000);
  const audit = await auditMessages(f, ids, () => 'sent');
  reportFaults('inject-redis', { kills, ...auditFigures(audit), resumes: failures, recipients: COUNT, seed });
  expect(kills).toBe(KILLS);
  expect(failures).toBeGreaterThan(0);
  // The cursor never went back: what it said was accepted stayed accepted.
  expect(cursors).toEqual([...cursors].sort((a, b) => a - b));
  expect(audit.stuck).toEqual([]);
  expect(audit.lost).toEqual([]);
  expect(audit.unexpected).toEqual([]);
  expect(audit.duplicatesUnflagged).toEqual([]);
  expect((await f.client.campaigns.status('inj')).counts.accepted).toBe(COUNT);
});
