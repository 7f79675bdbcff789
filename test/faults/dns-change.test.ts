import { afterAll, expect, it } from 'vitest';
import { isFinalState } from '@sluice/core';
import { faultsSeed, reportFaults, seededRandom } from '../support/faults-report.js';
import { startDnsServer } from '../support/dns-server.js';
import { maxInWindow, peakGuard, waitFor } from '../support/fleet.js';
import { useFleet } from '../support/use-fleet.js';

// A DNS/MX change under queued mail: moving.test's MX points at organisation A, whose
// receiver takes 4/s, so a backlog builds; mid-run the MX moves to organisation B (15/s).
// Once the cached answer expires (`organisations.cacheTtlMs`), the messages still waiting
// are charged to B's bucket, A no longer, and none is lost or sent twice.
const SCENARIO = 'dns-change';
const seed = faultsSeed(SCENARIO);
const random = seededRandom(seed);
const MESSAGES = 70;
const A = { rate: 4, burst: 2 };
const B = { rate: 15, burst: 3 };
const CACHE_TTL_MS = 1_000;
/** When the MX moves, after the first arrival: 2.5–4 s of A's pace. */
const SWITCH_AFTER_MS = 2_500 + Math.floor(random() * 1_500);

const dns = await startDnsServer({ 'moving.test': { mx: [{ priority: 10, exchange: 'mx1.mx-a.test.' }] } });
afterAll(() => dns.close());

const fleet = useFleet({
  schedulers: 1,
  workers: 1,
  config: {
    providers: { ses: { kind: 'ses', sandbox: true, rate: 200, burst: 20 } },
    organisations: {
      builtIn: false,
      patterns: [
        { name: 'org-a', mx: ['*.mx-a.test'] },
        { name: 'org-b', mx: ['*.mx-b.test'] },
      ],
      dnsServers: [dns.address],
      cacheTtlMs: CACHE_TTL_MS,
    },
    receivers: [
      { name: 'a', organisation: 'org-a', ...A },
      { name: 'b', organisation: 'org-b', ...B },
    ],
    reserves: { critical: 0 },
  },
});

it('charges the queued mail of a domain whose MX moved to the new organisation once its answer expires', async () => {
  const { client, sandbox } = fleet();
  await client.campaigns.create({ id: 'moving', priority: 'low' });
  const base = { from: 'news@acme.test', subject: 'news', text: 'hello', campaignId: 'moving' };
  const ids = await client.sendBulk(Array.from({ length: MESSAGES }, (_, i) => ({ ...base, to: `u${i}@moving.test` })));

  const first = await waitFor(() => sandbox.accepted()[0]?.arrivedAt, 20_000, 'the first arrival');
  await new Promise((r) => setTimeout(r, first + SWITCH_AFTER_MS - Date.now()));
  dns.set('moving.test', { mx: [{ priority: 10, exchange: 'mx1.mx-b.test.' }] });
  const switchedAt = Date.now();
  const beforeSwitch = sandbox.accepted().length;

  const final = async () => {
    const records = await Promise.all(ids.map((m) => client.messages.status(m.id)));
    return records.every((r) => r && isFinalState(r.state)) ? records : null;
  };
  let records = await waitFor(final, 60_000, 'every message final').catch(() => undefined);
  const stuck = records
    ? 0
    : (await Promise.all(ids.map((m) => client.messages.status(m.id)))).filter((r) => !r || !isFinalState(r.state))
        .length;
  records ??= await Promise.all(ids.map((m) => client.messages.status(m.id)));

  const accepted = sandbox.accepted();
  const arrivalOf = new Map(accepted.map((a) => [a.sluiceId, a.arrivedAt]));
  // A slot booked on A just before the answer expired is kept (booked up to the 1 s horizon,
  // and a worker may start it up to 250 ms late): past that, nothing may be charged to A.
  const settledAt = switchedAt + CACHE_TTL_MS + 1_000 + 1_000;
  const chargedTo = (name: string) => records.filter((r) => r?.receiver === name);
  const lateOnA = chargedTo('a').filter((r) => (arrivalOf.get(r!.id) ?? 0) > settledAt);
  const onB = chargedTo('b').map((r) => arrivalOf.get(r!.id) ?? 0);
  const sent = records.filter((r) => r?.state === 'sent');
  const lost = records.filter((r) => !r || (isFinalState(r.state) && (r.state !== 'sent' || !arrivalOf.has(r.id))));
  const figures = {
    lost: lost.length,
    duplicatesUnflagged: sandbox.stats().duplicates,
    stuck,
    chargedToA: chargedTo('a').length,
    chargedToB: chargedTo('b').length,
    sentBeforeSwitch: beforeSwitch,
    lateOnA: lateOnA.length,
    peakOnB: maxInWindow(onB),
    switchAfterMs: SWITCH_AFTER_MS,
    dnsQueries: dns.queries('moving.test'),
    secondsToDrain: Math.round((Math.max(...accepted.map((a) => a.arrivedAt)) - switchedAt) / 100) / 10,
  };
  reportFaults(SCENARIO, figures);

  expect({ stuck, lost: lost.length, duplicates: sandbox.stats().duplicates }).toEqual({
    stuck: 0,
    lost: 0,
    duplicates: 0,
  });
  expect(sent).toHaveLength(MESSAGES);
  expect(accepted).toHaveLength(MESSAGES);
  // A's pace before the switch: the backlog was real and still waiting when the MX moved.
  expect(beforeSwitch).toBeLessThan(MESSAGES / 2);
  expect(maxInWindow(chargedTo('a').map((r) => arrivalOf.get(r!.id) ?? 0))).toBeLessThanOrEqual(
    peakGuard(A.rate, A.burst),
  );
  // The rest went under B's bucket, at B's pace, and A was charged no more.
  expect(lateOnA).toEqual([]);
  expect(chargedTo('a').length + chargedTo('b').length).toBe(MESSAGES);
  expect(chargedTo('b').length).toBeGreaterThanOrEqual(MESSAGES - beforeSwitch - 2 * (A.rate + A.burst));
  expect(figures.peakOnB).toBeLessThanOrEqual(peakGuard(B.rate, B.burst));
  // The answer was asked again once it expired, not per message.
  expect(figures.dnsQueries).toBeGreaterThanOrEqual(2);
});
