import { expect, inject, it } from 'vitest';
import { HOME_COUNT, createKeys } from '@sluice/core';
import { prepareCampaign } from '../support/campaign-recipients.js';
import { faultsCount, faultsSeed, reportFaults, seededRandom } from '../support/faults-report.js';
import { waitFor } from '../support/fleet.js';
import { startProducer, type Producer } from '../support/producer-process.js';
import { useFleet } from '../support/use-fleet.js';

// A backend's producer SIGKILLed while it injects a campaign: every 0.4–1.4 s (seeded) it is killed
// and started again, and each start resumes from `campaigns.status(id).cursor.position`, until
// the cursor reaches the end of the list; meanwhile the fleet sends. Every position must reach
// the sandbox exactly once (sluice id `<campaign>_<position>`), and the cursor never goes
// backwards nor ahead of the recipients accepted.
const SCENARIO = 'inject-kill';
const seed = faultsSeed(SCENARIO);
const random = seededRandom(seed);
/** The list's length; the 200,000 with `SLUICE_FAULTS_INJECT_COUNT=200000` (CONTRIBUTING.md, Fault suite). */
const COUNT = faultsCount('SLUICE_FAULTS_INJECT_COUNT', 40_000);
const CAMPAIGN = 'killed';
/** How long the sends may take after the injection, and the whole test: 200,000 took ~10 minutes here. */
const DRAIN_MS = Math.max(240_000, COUNT * 5);
const TEST_MS = Math.max(420_000, COUNT * 10);

const fleet = useFleet({
  schedulers: 1,
  workers: 2,
  config: {
    providers: { ses: { kind: 'ses', sandbox: true, rate: 1_000_000, burst: 100_000, concurrency: 64 } },
    scheduler: { concurrency: 64 },
    worker: { concurrency: { critical: 4, high: 4, normal: 32, low: 32 } },
    defaults: { campaign: { rate: 1_000_000 } },
    organisations: { builtIn: false },
  },
});

/** The injection's chunk (`campaigns.inject`'s default `chunkSize`). */
const INJECT_CHUNK = 500;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Watches the campaign's cursor and its accepted count (its counters in the sixteen homes),
 * the cursor read first: the cursor must never move back, never be ahead of the recipients
 * accepted, and never more than a chunk behind them (a chunk's records go before its cursor;
 * a producer killed between the two leaves at most that chunk's, which its resume rewrites).
 */
function watchCursor(done: () => boolean) {
  const { redis, prefix } = fleet();
  const keys = createKeys(prefix);
  const seen = { reads: 0, last: 0, backwards: [] as string[], mismatched: [] as string[] };
  const loop = (async () => {
    while (!done()) {
      const cursor = await redis.get(keys.campaignCursor(CAMPAIGN));
      const parts = await Promise.all(
        Array.from({ length: HOME_COUNT }, (_, h) => redis.hget(keys.campaignHome(CAMPAIGN, h), 'n:accepted')),
      );
      const position = Number(cursor?.split('|')[0] ?? 0);
      const accepted = parts.reduce((sum, n) => sum + Number(n ?? 0), 0);
      seen.reads++;
      if (position < seen.last) seen.backwards.push(`${seen.last} → ${position}`);
      if (position > accepted || accepted - position > INJECT_CHUNK)
        seen.mismatched.push(`cursor ${position}, accepted ${accepted}`);
      seen.last = Math.max(seen.last, position);
      await sleep(100);
    }
  })();
  return { seen, stop: () => loop };
}

it(
  `sends each of ${COUNT} injected recipients exactly once while the producer is SIGKILLed every 0.4-1.4 s`,
  async () => {
    const { client, sandbox } = fleet();
    const started = Date.now();
    await prepareCampaign(client, CAMPAIGN, { mix: 'even', recipientCount: COUNT });
    let finished = false;
    const cursor = watchCursor(() => finished);
    const task = { redisUrl: inject('redisUrl'), campaignId: CAMPAIGN, mix: 'even' as const, count: COUNT };
    const starts: number[] = [];
    let kills = 0;
    let last: Producer | undefined;
    for (;;) {
      const producer = await startProducer(fleet(), task);
      starts.push(producer.from);
      last = producer;
      // Often enough for a few kills however fast the injection goes (40,000 take ~6 s here).
      const killAfter = 400 + Math.floor(random() * 1_000);
      const ended = await Promise.race([producer.done.then(() => true), sleep(killAfter).then(() => false)]);
      if (ended) break;
      const exit = await producer.process.stop({ signal: 'SIGKILL' });
      // It may have finished on its own just before the signal.
      if (exit.signal === 'SIGKILL') kills++;
      else break;
    }
    const done = await last.done;
    const injectSeconds = (Date.now() - started) / 1000;
    expect(done, `the last producer ended without finishing:\n${last.process.tail().join('\n')}`).toBeDefined();

    await waitFor(() => sandbox.stats().accepted >= COUNT, DRAIN_MS, `${COUNT} recipients at the sandbox`).catch(
      () => undefined,
    );
    // Late copies would come within a few seconds (a retry, a second admission): wait them out.
    await waitFor(async () => (await client.campaigns.status(CAMPAIGN)).pending === 0, 30_000, 'nothing pending').catch(
      () => undefined,
    );
    await sleep(2_000);
    finished = true;
    await cursor.stop();

    const arrivals = new Map<number, number>();
    const strays: string[] = [];
    for (const a of sandbox.accepted()) {
      const m = new RegExp(`^${CAMPAIGN}_(\\d+)$`).exec(a.sluiceId ?? '');
      const position = m ? Number(m[1]) : -1;
      if (position < 0 || position >= COUNT) strays.push(a.sluiceId ?? '?');
      else arrivals.set(position, (arrivals.get(position) ?? 0) + 1);
    }
    const missing: number[] = [];
    let duplicates = 0;
    for (let p = 0; p < COUNT; p++) {
      const n = arrivals.get(p) ?? 0;
      if (n === 0) missing.push(p);
      duplicates += Math.max(0, n - 1);
    }
    const status = await client.campaigns.status(CAMPAIGN);
    reportFaults(SCENARIO, {
      kills,
      lost: missing.length,
      duplicatesUnflagged: duplicates,
      stuck: status.pending,
      recipients: COUNT,
      producerStarts: starts.length,
      cursorBackwards: cursor.seen.backwards.length,
      cursorMismatched: cursor.seen.mismatched.length,
      injectSeconds: Math.round(injectSeconds * 10) / 10,
      seconds: Math.round((Date.now() - started) / 100) / 10,
      seed,
    });
    if (missing.length > 0) console.log(`${SCENARIO}: missing positions (first 20) ${missing.slice(0, 20).join(', ')}`);

    // Enough kills to mean something; each start resumed where the one before had got to.
    expect(kills).toBeGreaterThanOrEqual(3);
    expect(starts).toEqual([...starts].sort((a, b) => a - b));
    expect(cursor.seen.backwards).toEqual([]);
    expect(cursor.seen.mismatched).toEqual([]);
    expect(status.cursor.position).toBe(COUNT);
    expect(status.counts.accepted).toBe(COUNT);
    expect(strays).toEqual([]);
    expect({ missing: missing.length, duplicates }).toEqual({ missing: 0, duplicates: 0 });
    expect(status.counts.sent).toBe(COUNT);
  },
  TEST_MS,
);
