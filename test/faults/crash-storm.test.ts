import { expect, it } from 'vitest';
import type { MessageInput } from '@sluice/client';
import type { FleetProcess } from '../support/fleet.js';
import {
  auditFigures,
  auditMessages,
  explainStuck,
  summarize,
  waitUntilFinal,
  type Expected,
} from '../support/faults-audit.js';
import { faultsSeed, reportFaults, seededRandom } from '../support/faults-report.js';
import { useFleet } from '../support/use-fleet.js';

// The crash storm: a mixed run (a low newsletter over SMTP, a normal campaign and critical and
// high transactional mail over SES, four receivers, one of them throttling and one
// greylisting) while a scheduler or a worker is SIGKILLed every 1-2 s and replaced. Once it
// has drained, every message must be in exactly one final state, as the scenario made it
// (hard bounces rejected, the rest sent and at the sandbox), and at the sandbox once unless
// its record counts an ambiguous attempt.
const seed = faultsSeed('crash-storm');
const random = seededRandom(seed);

const NEWS = 900; // campaign `news`, low, over SMTP
const UPDATES = 600; // campaign `updates`, normal, over SES
const CRITICAL = 250;
const HIGH = 250;
const TOTAL = NEWS + UPDATES + CRITICAL + HIGH;
/**
 * The storm ends once this share of the mail is at the sandbox and `MIN_KILLS` processes were
 * killed, or after `STORM_MS` (a loaded machine starts a process in tens of seconds, and only
 * a ready process is killed).
 */
const STORM_SHARE = 0.9;
const MIN_KILLS = 8;
const STORM_MS = 40_000;

// Where recipients live, with their share of the mail. The sandbox's yahoo.test takes 40/s
// while Sluice is told 60/s (throttles); gmail.test greylists (SMTP: a deferral first).
const DOMAINS: [string, number][] = [
  ['example.test', 0.5],
  ['gmail.test', 0.25],
  ['outlook.test', 0.15],
  ['yahoo.test', 0.1],
];

const fleet = useFleet({
  schedulers: 2,
  workers: 3,
  scenario: {
    default: { latencyMs: 40, bounce: ['bounce-*@*'] },
    domains: {
      'gmail.test': { latencyMs: 40, greylist: true, bounce: ['bounce-*@*'] },
      'yahoo.test': { latencyMs: 20, rate: 40, burst: 8, bounce: ['bounce-*@*'] },
    },
  },
  config: {
    defaultProvider: 'ses',
    providers: {
      ses: { kind: 'ses', sandbox: true, rate: 120, burst: 20, concurrency: 24 },
      relay: { kind: 'smtp', sandbox: true, rate: 120, burst: 20, concurrency: 16 },
    },
    routes: { bulk: [{ provider: 'relay', weight: 1 }] },
    receivers: [
      { name: 'gmail', domains: ['gmail.test'], rate: 60, burst: 10 },
      { name: 'yahoo', domains: ['yahoo.test'], rate: 60, burst: 10 },
    ],
    organisations: { builtIn: false },
    delivery: {
      retry: {
        throttled: { baseMs: 300, maxMs: 2_000 },
        greylisted: { baseMs: 300, maxMs: 1_000 },
        ambiguous: { baseMs: 200, maxMs: 500 },
      },
    },
    backpressure: { cooldownMs: 500, holdMs: 3_000 },
  },
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function recipient(i: number): string {
  let x = random();
  let domain = DOMAINS[0]![0];
  for (const [d, share] of DOMAINS) {
    if (x < share) {
      domain = d;
      break;
    }
    x -= share;
  }
  // About one in 50 hard-bounces: the scenario makes those permanent.
  return `${random() < 0.02 ? 'bounce' : 'r'}-${i}@${domain}`;
}

const base = { from: 'app@acme.test', subject: 'storm', text: 'hello' };
const news: MessageInput[] = Array.from({ length: NEWS }, (_, i) => ({
  ...base,
  to: recipient(i),
  campaignId: 'news',
  stream: 'bulk',
}));
const updates: MessageInput[] = Array.from({ length: UPDATES }, (_, i) => ({
  ...base,
  to: recipient(NEWS + i),
  campaignId: 'updates',
}));
const transactional: MessageInput[] = Array.from({ length: CRITICAL + HIGH }, (_, i) => ({
  ...base,
  to: recipient(NEWS + UPDATES + i),
  priority: i % 2 === 0 ? 'critical' : 'high',
}));

/**
 * Kills a random scheduler or worker every 1-2 s and starts another of its kind, until `done`.
 * Replacements start in the background (a start can take seconds on a loaded machine), so the
 * pace of kills does not depend on it; only a process that is ready can be the next victim,
 * and the last ready one of its kind is spared.
 */
async function storm(done: (kills: number) => boolean) {
  const ready: FleetProcess[] = [...fleet().processes];
  const starting: Promise<unknown>[] = [];
  const counts = { kills: 0, schedulers: 0, workers: 0, slowestStartMs: 0 };
  const kind = (p: FleetProcess) => (p.name.startsWith('scheduler') ? 'schedulers' : 'workers');
  while (!done(counts.kills)) {
    await sleep(1_000 + random() * 1_000);
    if (done(counts.kills)) break;
    const candidates = ready.filter((p) => ready.filter((q) => kind(q) === kind(p)).length > 1);
    if (candidates.length === 0) continue;
    const victim = candidates[Math.floor(random() * candidates.length)]!;
    ready.splice(ready.indexOf(victim), 1);
    expect(await victim.stop('SIGKILL')).toBeNull();
    counts.kills++;
    counts[kind(victim)]++;
    const next = kind(victim) === 'schedulers' ? fleet().startScheduler() : fleet().startWorker();
    const t = Date.now();
    starting.push(
      next.then((p) => {
        counts.slowestStartMs = Math.max(counts.slowestStartMs, Date.now() - t);
        ready.push(p);
      }),
    );
  }
  await Promise.all(starting);
  return counts;
}

it('ends every message of a mixed run in one final state, none lost or silently doubled, under a SIGKILL storm', async () => {
  const client = fleet().client;
  await client.campaigns.create({ id: 'news', priority: 'low' });
  await client.campaigns.create({ id: 'updates', priority: 'normal' });
  const started = Date.now();
  const ids = [...(await client.sendBulk(news)), ...(await client.sendBulk(updates))].map((r) => r.id);
  const to = new Map<string, string>();
  [...news, ...updates].forEach((m, i) => to.set(ids[i]!, m.to));

  // Transactional mail trickles in during the storm, 20 every 150 ms.
  const trickle = (async () => {
    for (let i = 0; i < transactional.length; i += 20) {
      const batch = transactional.slice(i, i + 20);
      const sent = await client.sendBulk(batch);
      sent.forEach((r, j) => {
        ids.push(r.id);
        to.set(r.id, batch[j]!.to);
      });
      await sleep(150);
    }
  })();

  const stormEnd = Date.now() + STORM_MS;
  const expectSent = [...news, ...updates, ...transactional].filter((m) => !m.to.startsWith('bounce-')).length;
  const counts = await storm(
    (kills) =>
      Date.now() > stormEnd || (kills >= MIN_KILLS && fleet().sandbox.stats().accepted >= STORM_SHARE * expectSent),
  );
  await trickle;
  const stormSeconds = (Date.now() - started) / 1000;

  await waitUntilFinal(fleet(), ids, 180_000);
  const drainSeconds = (Date.now() - started) / 1000 - stormSeconds;
  const expected = (id: string): Expected => (to.get(id)!.startsWith('bounce-') ? 'rejected' : 'sent');
  const audit = await auditMessages(fleet(), ids, expected);
  const figures = auditFigures(audit);
  reportFaults('crash-storm', {
    kills: counts.kills,
    ...figures,
    messages: ids.length,
    schedulerKills: counts.schedulers,
    workerKills: counts.workers,
    ambiguous: [...audit.rows.values()].filter((r) => r.ambiguous > 0).length,
    bouncesAssumedSent: audit.assumedSentRefused.length,
    ambiguousNeverArrived: audit.ambiguousNeverArrived.length,
    stormSeconds: Math.round(stormSeconds * 10) / 10,
    drainSeconds: Math.round(drainSeconds * 10) / 10,
    slowestStartSeconds: Math.round(counts.slowestStartMs / 100) / 10,
    seed,
  });
  console.log(`crash-storm: final states ${JSON.stringify(audit.byState)}`);
  // Each stuck message explains itself: its record, attempt log, and where its jobs are.
  const explained = figures.stuck > 0 ? await explainStuck(fleet(), audit.stuck) : [];
  if (figures.stuck > 0) {
    console.log(`crash-storm: seed ${seed}: stuck ${JSON.stringify(summarize(audit.stuck))}`);
    const orphans = explained.filter((e) => !e.willRun);
    console.log(`crash-storm: stuck with no job that will run it: ${orphans.length} of ${explained.length}`);
    for (const e of [...orphans, ...explained.filter((x) => x.willRun)].slice(0, 20)) {
      console.log(`crash-storm: stuck ${JSON.stringify(e)}`);
    }
  }
  if (figures.duplicatesUnflagged > 0) {
    console.log(`crash-storm: seed ${seed}: unflagged duplicates ${JSON.stringify(audit.duplicatesUnflagged)}`);
  }

  expect(ids).toHaveLength(TOTAL);
  // A guard-rail: a loaded machine kills fewer (a replacement must be ready to be killed).
  expect(counts.kills).toBeGreaterThanOrEqual(3);
  // None that nothing will ever move (a defect), then none left at all (a deadline run out).
  expect(explained.filter((e) => !e.willRun)).toEqual([]);
  expect(audit.stuck).toEqual([]);
  expect(audit.lost).toEqual([]);
  // Each message ends as the scenario made it: hard bounces rejected, the rest sent.
  expect(audit.unexpected).toEqual([]);
  expect(audit.duplicatesUnflagged).toEqual([]);

  // The campaigns' totals agree with the records.
  for (const [campaign, n] of [
    ['news', NEWS],
    ['updates', UPDATES],
  ] as const) {
    const status = await client.campaigns.status(campaign);
    const rows = ids.slice(campaign === 'news' ? 0 : NEWS, campaign === 'news' ? NEWS : NEWS + UPDATES);
    const sent = rows.filter((id) => audit.rows.get(id)!.state === 'sent').length;
    expect(status.pending).toBe(0);
    expect(status.counts).toMatchObject({ accepted: n, sent, rejected: n - sent, expired: 0, suppressed: 0 });
  }
}, 300_000); // the drain waits while mail keeps becoming final: a loaded machine takes longer
