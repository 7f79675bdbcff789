import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { inject, expect, it } from 'vitest';
import { createKeys, parseConfig } from '@sluice/core';
import { createOverrides, explain } from '@sluice/ops';
import { maxInWindow, peakGuard, waitFor } from './support/fleet.js';
import { fromSources, ROOT } from './support/process.js';
import { useFleet } from './support/use-fleet.js';
import { childEnv } from './support/env.js';

// Operator overrides bind the whole fleet through the adjustments hash, end by themselves,
// and `explain` tells what holds a message.
const CONFIG = {
  providers: { ses: { kind: 'ses', sandbox: true, rate: 100, burst: 10, concurrency: 16 } },
  receivers: [
    { name: 'held', domains: ['held.test'], rate: 50, burst: 10 },
    { name: 'flow', domains: ['flow.test'], rate: 50, burst: 10 },
    { name: 'capped', domains: ['capped.test'], rate: 50, burst: 10 },
    { name: 'slow', domains: ['slow.test'], rate: 1, burst: 1 },
    { name: 'booked', domains: ['booked.test'], rate: 20, burst: 2 },
  ],
  reserves: { critical: 0 },
};
const fleet = useFleet({ schedulers: 2, workers: 2, scenario: { default: { latencyMs: 5 } }, config: CONFIG });

const base = { from: 'app@acme.test', subject: 'hi', text: 'hello' };
const deps = () => {
  const { redis, prefix } = fleet();
  return {
    config: parseConfig({ ...CONFIG, redis: { url: inject('redisUrl'), prefix } }),
    redis,
    keys: createKeys(prefix),
  };
};
/** `sluice explain <id> --json` as an operator runs it, against this fleet's Redis and prefix. */
async function sluiceExplain(
  id: string,
): Promise<{ state: string; heldBy?: { layer: string; key: string }; summary: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-cli-'));
  const config = join(dir, 'sluice.yaml');
  writeFileSync(config, `redis: { prefix: ${fleet().prefix} }\n`);
  const run = promisify(execFile);
  const out = await run(process.execPath, [...fromSources('cli'), 'explain', id, '--json'], {
    cwd: ROOT,
    env: childEnv({ REDIS_URL: inject('redisUrl'), SLUICE_CONFIG: config }),
  });
  return JSON.parse(out.stdout) as { state: string; heldBy?: { layer: string; key: string }; summary: string };
}
const arrivals = (domain: string) =>
  fleet()
    .sandbox.accepted()
    .filter((a) => a.domain === domain)
    .map((a) => a.arrivedAt);

it('holds a paused receiver’s mail while another’s flows, and lets it go by itself at the end', async () => {
  const overrides = createOverrides(deps());
  const o = await overrides.set({
    scope: 'receiver',
    name: 'held',
    kind: 'pause',
    forMs: 3_000,
    actor: 'ana',
    reason: 'Gmail blocking us, OPS-12',
  });
  await new Promise((r) => setTimeout(r, 400)); // every process's adjustments copy refreshes
  const held = await fleet().client.sendBulk(
    Array.from({ length: 20 }, (_, i) => ({ ...base, to: `h${i}@held.test` })),
  );
  await fleet().client.sendBulk(Array.from({ length: 20 }, (_, i) => ({ ...base, to: `f${i}@flow.test` })));
  await waitFor(() => arrivals('flow.test').length >= 20, 10_000, 'the other receiver’s mail');
  expect(arrivals('held.test')).toEqual([]);

  // Explain tells the truth about a held one while it waits.
  const why = await waitFor(
    async () => {
      const e = await explain(deps(), held[19]!.id);
      return e.heldBy?.layer === 'override' ? e : null;
    },
    5_000,
    'the hold noted',
  );
  expect(why).toMatchObject({
    state: 'queued',
    heldBy: { layer: 'override', key: 'receiver:held', untilMs: o.untilMs },
  });
  expect(why.summary).toContain('ana');

  await waitFor(() => arrivals('held.test').length >= 20, 15_000, 'the held mail after the override ended');
  const t = arrivals('held.test');
  console.log(
    `overrides: held mail went from ${Math.min(...t) - o.untilMs} to ${Math.max(...t) - o.untilMs} ms after the pause ended; other receiver done ${Math.max(...arrivals('flow.test')) - o.setAt} ms after it was set`,
  );
  expect(Math.min(...t)).toBeGreaterThanOrEqual(o.untilMs);
  expect(Math.max(...t)).toBeLessThan(o.untilMs + 10_000); // typically within 2 s: a guard-rail
  expect(await overrides.list()).toEqual([]);
  // The leader's sweep wrote its end into the trail, once.
  const trail = await waitFor(
    async () => {
      const entries = await overrides.audit();
      return entries.some((e) => e.action === 'expire') ? entries : null;
    },
    5_000,
    'the expiry in the audit trail',
  );
  expect(trail.filter((e) => e.name === 'held').map((e) => [e.action, e.actor])).toEqual([
    ['expire', 'sluice'],
    ['set', 'ana'],
  ]);
});

it('holds a receiver to an override’s rate', async () => {
  const overrides = createOverrides(deps());
  await overrides.set({
    scope: 'receiver',
    name: 'capped',
    kind: 'rate',
    rate: 5,
    forMs: 60_000,
    actor: 'ana',
    reason: 'warming a new domain slowly',
  });
  await new Promise((r) => setTimeout(r, 400));
  await fleet().client.sendBulk(Array.from({ length: 40 }, (_, i) => ({ ...base, to: `c${i}@capped.test` })));
  await waitFor(() => arrivals('capped.test').length >= 40, 20_000, 'the capped receiver’s mail');
  const t = arrivals('capped.test');
  const peak = maxInWindow(t);
  const rate = (t.length - 1) / ((Math.max(...t) - Math.min(...t)) / 1000);
  console.log(
    `overrides: receiver at an override of 5/s (configured 50/s): peak ${peak}/s, ${rate.toFixed(2)}/s over ${t.length}`,
  );
  expect(peak).toBeLessThanOrEqual(peakGuard(5, 1)); // rate + its burst (a tenth, at least 1); configured 50/s
  expect(rate).toBeGreaterThan(2.5);
  expect(await overrides.clear('receiver', 'capped', 'ana', 'done')).toBe(true);
});

it('suspends a receiver: even mail already admitted (booked up to a second ahead) is not sent until it ends, then all of it once', async () => {
  const overrides = createOverrides(deps());
  const sent = await fleet().client.sendBulk(
    Array.from({ length: 60 }, (_, i) => ({ ...base, to: `b${i}@booked.test` })),
  );
  await waitFor(() => arrivals('booked.test').length >= 10, 10_000, 'the receiver sending');
  // At 20/s with a 1 s horizon, about 20 messages are admitted and waiting for their slots now.
  const o = await overrides.set({
    scope: 'receiver',
    name: 'booked',
    kind: 'suspend',
    forMs: 2_500,
    actor: 'ana',
    reason: 'complaint storm, OPS-13',
  });
  const settled = o.setAt + 400; // every process's adjustments copy refreshes (250 ms)
  // The sandbox stamps each arrival: no need to sleep through the suspension to see what came in it.
  await waitFor(
    async () =>
      (await Promise.all(sent.map((m) => fleet().client.messages.status(m.id)))).every((r) => r?.state === 'sent'),
    25_000,
    'all sent after the suspension',
  );
  const during = arrivals('booked.test').filter((t) => t > settled && t < o.untilMs);
  const copies = fleet()
    .sandbox.accepted()
    .filter((a) => a.domain === 'booked.test');
  console.log(
    `overrides: suspend: ${during.length} sends between 400 ms after it was set and its end; all ${copies.length} of 60 sent after it, none twice`,
  );
  expect(during).toEqual([]);
  expect(copies).toHaveLength(60);
  expect(fleet().sandbox.stats().duplicates).toBe(0);
});

it('explains a message held by a receiver’s quota, one of a paused campaign, and one already sent', async () => {
  const d = deps();
  // 30 at 1/s: the last is held for half a minute, well past the three `sluice` processes below.
  const slow = await fleet().client.sendBulk(
    Array.from({ length: 30 }, (_, i) => ({ ...base, to: `s${i}@slow.test` })),
  );
  const quota = await waitFor(
    async () => {
      const e = await explain(d, slow[29]!.id);
      return e.heldBy?.layer === 'receiver' ? e : null;
    },
    10_000,
    'the receiver’s quota noted',
  );
  expect(quota).toMatchObject({ state: 'queued', heldBy: { layer: 'receiver', key: 'slow' } });
  expect(quota.heldBy!.untilMs).toBeGreaterThan(Date.now());

  await fleet().client.campaigns.create({ id: 'weekly', priority: 'low' });
  await fleet().client.campaigns.pause('weekly');
  const [weekly] = await fleet().client.sendBulk([{ ...base, to: 'w0@flow.test', campaignId: 'weekly' }]);
  const paused = await explain(d, weekly!.id);
  expect(paused).toMatchObject({ state: 'queued', heldBy: { layer: 'campaign-pause', key: 'weekly' } });

  const [sent] = await fleet().client.sendBulk([{ ...base, to: 'done@flow.test' }]);
  await waitFor(async () => (await fleet().client.messages.status(sent!.id))?.state === 'sent', 10_000, 'sent');
  const done = await explain(d, sent!.id);
  expect(done).toMatchObject({ state: 'sent', attempts: 1 });
  expect(done.heldBy).toBeUndefined();
  expect(done.summary).toMatch(/^sent at .* via ses/);

  // The command tells the same: held by the receiver's quota, by the campaign's pause, sent.
  const [cliQuota, cliPaused, cliDone] = await Promise.all([
    sluiceExplain(slow[29]!.id),
    sluiceExplain(weekly!.id),
    sluiceExplain(sent!.id),
  ]);
  expect(cliQuota).toMatchObject({ state: 'queued', heldBy: { layer: 'receiver', key: 'slow' } });
  expect(cliPaused).toMatchObject({ state: 'queued', heldBy: { layer: 'campaign-pause', key: 'weekly' } });
  expect(cliDone).toMatchObject({ state: 'sent' });
  expect(cliDone.summary).toMatch(/^sent at .* via ses/);

  const unknown = await explain(d, 'no-such-id');
  expect(unknown).toMatchObject({ state: 'unknown', attempts: 0 });
  console.log(
    `explain: ${quota.summary}\nexplain: ${paused.summary}\nexplain: ${done.summary}\nexplain: ${unknown.summary}`,
  );
  await fleet().client.campaigns.resume('weekly');
});
