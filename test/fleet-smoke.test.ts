import { expect, it } from 'vitest';
import { waitFor } from './support/fleet.js';
import { useFleet } from './support/use-fleet.js';

const fleet = useFleet({ schedulers: 1, workers: 1 });

it('sends what a backend enqueues, once each, and records the outcome', async () => {
  const ids: string[] = [];
  for (let i = 0; i < 20; i++) {
    const { id, duplicate } = await fleet().client.send({
      from: 'Acme <news@acme.test>',
      to: `user${i}@example.test`,
      subject: `hello ${i}`,
      text: 'hi',
      priority: i % 2 ? 'high' : 'normal',
    });
    expect(duplicate).toBe(false); // even when a scheduler took the job before send() returned
    ids.push(id);
  }
  await waitFor(() => fleet().sandbox.accepted().length >= 20, 20_000, '20 accepted');
  const accepted = fleet().sandbox.accepted();
  expect(accepted.map((a) => a.sluiceId).sort()).toEqual([...ids].sort());
  expect(accepted[0]!.messageId).toMatch(/^<[mk][0-9a-f]+@acme\.test>$/);
  const record = await waitFor(
    async () => {
      const r = await fleet().client.messages.status(ids[0]!);
      return r?.state === 'sent' ? r : null;
    },
    5_000,
    'record sent',
  );
  expect(record).toMatchObject({ state: 'sent', attempts: 1, provider: 'ses' });
  // The outcome totals keep them after the signals' five minutes, with no admin app or
  // scrape: the scheduler's governor folds settled buckets into them every tick.
  const totals = await waitFor(
    async () => {
      const t = await fleet().redis.hgetall(`${fleet().prefix}:ops:outcomes`);
      return Number(t.accepted) === 20 ? t : null;
    },
    10_000,
    'the totals folded',
  );
  expect(totals).toMatchObject({ attempted: '20', accepted: '20' });
});
