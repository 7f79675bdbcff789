import { expect, it } from 'vitest';
import { waitFor } from './support/fleet.js';
import { useFleet } from './support/use-fleet.js';

// A backend follows a campaign's outcomes through two consumer groups; the scheduler's
// leader trims what both acknowledged and shrinks those records (delivery.retention: low
// is compact by default), and leaves alone what one group still holds.
const fleet = useFleet({ schedulers: 1, workers: 1 });

it('every sent message reaches each group; a record shrinks once both groups acknowledged it', async () => {
  const { client } = fleet();
  await client.outcomes.subscribe('crm');
  await client.outcomes.subscribe('billing');
  await client.campaigns.create({ id: 'digest', priority: 'low' });
  const sent = await client.sendBulk(
    Array.from({ length: 10 }, (_, i) => ({
      from: 'news@acme.test',
      to: `reader${i}@example.test`,
      subject: 'Digest',
      text: 'This week',
      campaignId: 'digest',
    })),
  );
  const ids = sent.map((s) => s.id).sort();
  await waitFor(
    async () => {
      const records = await Promise.all(ids.map((id) => client.messages.status(id)));
      return records.every((r) => r?.state === 'sent') ? true : null;
    },
    30_000,
    'ten messages sent',
  );
  const events = await client.outcomes.read('crm', 'crm-1', { count: 100 });
  expect(events.map((e) => e.messageId).sort()).toEqual(ids);
  expect(events.every((e) => e.state === 'sent' && e.campaignId === 'digest' && e.providerMessageId)).toBe(true);
  await client.outcomes.ack(
    'crm',
    events.map((e) => e.id),
  );

  // billing has acknowledged only the first five: only those shrink.
  const billing = await client.outcomes.read('billing', 'b-1', { count: 100 });
  const acked = billing.slice(0, 5);
  await client.outcomes.ack(
    'billing',
    acked.map((e) => e.id),
  );
  // The leader trims each message home's stream on its own: every acknowledged record shrinks.
  await waitFor(
    async () => {
      const records = await Promise.all(acked.map((e) => client.messages.status(e.messageId)));
      return records.every((r) => r?.to === '') ? true : null;
    },
    10_000,
    'the acknowledged records shrink',
  );
  for (const e of acked) {
    expect(await client.messages.status(e.messageId)).toMatchObject({ state: 'sent', to: '', campaignId: 'digest' });
  }
  const held = await client.messages.status(billing[5]!.messageId);
  expect(held?.to).toMatch(/@example\.test$/);
  expect(await client.outcomes.backlog()).toBe(5);
  await client.outcomes.ack(
    'billing',
    billing.slice(5).map((e) => e.id),
  );
  await waitFor(async () => ((await client.outcomes.backlog()) === 0 ? true : null), 10_000, 'the stream trimmed');
});
