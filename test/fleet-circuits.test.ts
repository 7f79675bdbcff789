import { expect, it } from 'vitest';
import type { GovernorDecision } from '@sluice/dispatch';
import { waitFor } from './support/fleet.js';
import { useFleet } from './support/use-fleet.js';
import { BLOCKING, RELAY } from './support/scenarios.js';

// One receiver starts blocking (550 5.7.1 to everything): its circuit opens and its mail
// waits, while another receiver keeps its pace as if nothing happened. "Its pace" is a
// guard-rail here (starved: many times slower); the tight figure, within 25%, is `pnpm bench`'s
// `isolation` row.
const fleet = useFleet({
  schedulers: 1,
  workers: 2,
  scenario: { domains: BLOCKING.domains },
  config: {
    ...RELAY,
    receivers: BLOCKING.receivers,
    governor: {
      ...BLOCKING.governor,
      rules: [
        BLOCKING.rule,
        // Matched on the reply itself: Microsoft's block-list answer (5.7.1 … S3140).
        {
          id: 'block-list',
          signal: 'matched',
          match: { codes: ['5.7.1'], text: 'block list \\(S3140\\)' },
          atLeast: 5,
          scope: 'receiver',
          multiply: 0.5,
        },
      ],
    },
  },
});

const base = { from: 'app@acme.test', subject: 'hi', text: 'hello' };

it('opens one receiver’s circuit without slowing another receiver', async () => {
  const { client, sandbox } = fleet();
  const arrivals = (prefix: string) =>
    sandbox
      .accepted()
      .filter((a) => a.to[0]!.startsWith(prefix))
      .map((a) => a.arrivedAt);
  const span = (t: number[]) => (Math.max(...t) - Math.min(...t)) / 1000;
  const allSent = (ids: { id: string }[]) =>
    waitFor(
      async () => (await Promise.all(ids.map((s) => client.messages.status(s.id)))).every((r) => r?.state === 'sent'),
      30_000,
      'all sent',
    );

  // Baseline: the fine receiver alone.
  const alone = await client.sendBulk(Array.from({ length: 150 }, (_, i) => ({ ...base, to: `a${i}@fine.test` })));
  await allSent(alone);
  const aloneSeconds = span(arrivals('a'));

  const blocked = await client.sendBulk(Array.from({ length: 150 }, (_, i) => ({ ...base, to: `x${i}@blocked.test` })));
  const fine = await client.sendBulk(Array.from({ length: 150 }, (_, i) => ({ ...base, to: `b${i}@fine.test` })));
  await allSent(fine);
  const withBlockSeconds = span(arrivals('b'));

  const log = await fleet().redis.xrange(`${fleet().prefix}:gov:log`, '-', '+');
  const opened = log.map(([, f]) => JSON.parse(f[1]!) as GovernorDecision).filter((d) => d.action === 'open');
  expect(opened).toMatchObject([{ rule: 'blocks', scope: 'circuit', name: 'blocked|default|transactional' }]);
  const matched = log.map(([, f]) => JSON.parse(f[1]!) as GovernorDecision).filter((d) => d.rule === 'block-list');
  expect(matched).toMatchObject([
    { action: 'lower', scope: 'receiver', name: 'blocked', inputs: { signal: 'matched' } },
  ]);
  // Refused at the receiver only until the circuit opened; the rest wait behind it.
  const refused = sandbox.stats().byDomain['blocked.test']!.rejected;
  const records = await Promise.all(blocked.map((s) => client.messages.status(s.id)));
  const waiting = records.filter((r) => r?.state === 'queued' || r?.state === 'retrying').length;
  console.log(
    `circuit: opened after ${refused} refusals, ${waiting} of 150 waiting; fine receiver ${aloneSeconds.toFixed(2)} s alone, ${withBlockSeconds.toFixed(2)} s meanwhile`,
  );
  expect(refused).toBeLessThan(60);
  expect(waiting).toBeGreaterThan(90);
  expect(withBlockSeconds).toBeLessThanOrEqual(aloneSeconds * 2 + 1);
}, 90_000);
