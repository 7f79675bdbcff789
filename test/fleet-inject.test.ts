import { expect, it } from 'vitest';
import type { InjectProgress } from '@sluice/client';
import { createKeys } from '@sluice/core';
import { createLaunchStore } from '@sluice/store';
import { waitFor } from './support/fleet.js';
import { useFleet } from './support/use-fleet.js';

// A small window, so a few thousand recipients go through it several times over.
const WINDOW = { aheadMs: 1_000, minWindow: 300, maxWindow: 1_200 };
const fleet = useFleet({
  schedulers: 1,
  workers: 1,
  config: {
    injection: WINDOW,
    providers: { ses: { kind: 'ses', sandbox: true, rate: 600, burst: 60 } },
    defaults: { campaign: { rate: 400 } },
  },
  scenario: { default: { latencyMs: 2 } },
});

async function* recipients(count: number, from = 0) {
  for (let i = from; i < count; i++) {
    // Recipient 17 has no `first`: its subject cannot render.
    yield { to: `user${i}@d${i % 5}.test`, data: i === 17 ? {} : { first: `F${i}` }, key: `row-${i}`, cursor: i * 10 };
  }
}

it('sends every injected recipient once, rendered from the campaign content, never ahead of the window', async () => {
  const { client, sandbox } = fleet();
  await client.campaigns.create({
    id: 'news',
    priority: 'low',
    content: {
      from: 'Acme <news@acme.test>',
      subject: 'Hello {{first}}',
      html: '<p>Dear {{first}}</p>',
      text: 'Dear {{first}}',
    },
  });
  const count = 3_000;
  const decision = await client.campaigns.launch('news', { total: count, sample: { 'd0.test': 1, 'd1.test': 1 } });
  expect(decision.decision).toMatchObject({ kind: 'accept' });
  // The scheduler writes a new campaign's window at its next poll (the defaults apply until then).
  await waitFor(async () => (await client.campaigns.status('news')).window.ready === WINDOW.minWindow, 5_000, 'window');
  let peakPending = 0;
  let waited = 0;
  const result = await client.campaigns.inject('news', recipients(count), {
    onProgress(p: InjectProgress) {
      peakPending = Math.max(peakPending, p.window.pending);
      if (p.waiting === 'window') waited++;
    },
  });
  expect(result).toMatchObject({
    accepted: count,
    skipped: 0,
    cursor: { position: count, value: String((count - 1) * 10) },
  });
  // Redis never held more of the campaign than its window allows (plus the one chunk being written).
  expect(waited).toBeGreaterThan(0);
  expect(peakPending).toBeLessThanOrEqual(WINDOW.maxWindow + 500);

  await waitFor(() => sandbox.accepted().length >= count - 1, 60_000, 'every renderable recipient sent');
  const byId = new Map<string, number>();
  for (const a of sandbox.accepted()) byId.set(a.sluiceId!, (byId.get(a.sluiceId!) ?? 0) + 1);
  expect(byId.size).toBe(count - 1);
  expect([...byId.values()].every((n) => n === 1)).toBe(true);
  const seven = sandbox.accepted().find((a) => a.sluiceId === 'news_7')!;
  expect(seven).toMatchObject({ subject: 'Hello F7', to: ['user7@d2.test'] });

  // The one that could not render ends rejected, naming the field and the variable.
  const bad = await waitFor(
    async () => {
      const r = await client.messages.status('news_17');
      return r?.state === 'rejected' ? r : null;
    },
    10_000,
    'news_17 rejected',
  );
  expect(bad.lastReply).toMatch(/content\.subject: "first" not defined/);
  const status = await client.campaigns.status('news');
  expect(status.cursor).toEqual({ position: count, value: String((count - 1) * 10) });
  await waitFor(async () => (await client.campaigns.status('news')).pending === 0, 10_000, 'nothing pending');
  expect((await client.campaigns.status('news')).counts).toMatchObject({
    accepted: count,
    sent: count - 1,
    rejected: 1,
  });
});

it('resumes from the cursor: recipients accepted before are skipped, a cursor ahead is refused', async () => {
  const { client } = fleet();
  await client.campaigns.create({ id: 'resume', content: { from: 'a@acme.test', subject: 'Hi {{first}}', text: 'x' } });
  // Not launched yet: nothing is injected.
  await expect(client.campaigns.inject('resume', recipients(40))).rejects.toMatchObject({
    code: 'campaign_not_launched',
  });
  await client.campaigns.launch('resume', { total: 40, sample: { 'd0.test': 1 } });
  const first = await client.campaigns.inject('resume', take(recipients(40), 25));
  expect(first).toMatchObject({ accepted: 25, cursor: { position: 25 } });
  // The whole list again from the start: the first 25 are skipped, the rest accepted.
  const again = await client.campaigns.inject('resume', recipients(40));
  expect(again).toMatchObject({ accepted: 15, skipped: 25, cursor: { position: 40 } });
  // Resumed from the cursor's position, with the source reopened there.
  const none = await client.campaigns.inject('resume', recipients(40, 40), { from: 40 });
  expect(none).toMatchObject({ accepted: 0, skipped: 0 });
  await expect(client.campaigns.inject('resume', recipients(50, 45), { from: 45 })).rejects.toMatchObject({
    code: 'cursor_ahead',
    path: 'from',
  });
  expect((await client.campaigns.status('resume')).counts.accepted).toBe(40);

  // Redis losing acknowledged writes (a restart on `appendfsync everysec`) can move the cursor
  // back under a running injection: it stops rather than leave the positions between unsent.
  const { redis, prefix } = fleet();
  await client.campaigns.create({ id: 'lost', content: { from: 'a@acme.test', subject: 'Hi {{first}}', text: 'x' } });
  await client.campaigns.launch('lost', { total: 100, sample: { 'd0.test': 1 } });
  let rolledBack = false;
  await expect(
    client.campaigns.inject('lost', recipients(100), {
      chunkSize: 20,
      onProgress: (p) => {
        if (p.cursor.position === 40 && !rolledBack) {
          rolledBack = true;
          void redis.set(createKeys(prefix).campaignCursor('lost'), '20|');
        }
      },
    }),
  ).rejects.toMatchObject({ code: 'cursor_ahead', message: expect.stringMatching(/resume from 20/) as unknown });
  expect((await client.campaigns.status('lost')).cursor.position).toBe(20);
});

it('refuses a bad recipient naming it, with what came before accepted and the cursor at it', async () => {
  const { client } = fleet();
  await client.campaigns.create({ id: 'bad', content: { from: 'a@acme.test', subject: 'Hi', text: 'x' } });
  await client.campaigns.launch('bad', { total: 4, domains: { 'x.test': 4 } });
  const list = [{ to: 'a@x.test' }, { to: 'b@x.test' }, { to: 'not an address' }, { to: 'd@x.test' }];
  await expect(client.campaigns.inject('bad', list, { chunkSize: 2 })).rejects.toMatchObject({
    code: 'invalid_recipient',
    path: 'recipients.2.to',
  });
  expect((await client.campaigns.status('bad')).cursor.position).toBe(2);
  // With `invalid: 'reject'` it is recorded as rejected and the rest goes on.
  const rest = await client.campaigns.inject('bad', list, { invalid: 'reject' });
  expect(rest).toMatchObject({ accepted: 2, skipped: 2, rejected: 1 });
  expect(await client.messages.status('bad_2')).toMatchObject({ state: 'rejected', lastOutcome: 'invalid_recipient' });
  await expect(client.campaigns.inject('nope', list)).rejects.toMatchObject({ code: 'unknown_campaign' });
  await client.campaigns.create({ id: 'whole' });
  await expect(client.campaigns.inject('whole', list)).rejects.toMatchObject({ code: 'campaign_no_content' });
});

async function* take<T>(source: AsyncIterable<T>, n: number): AsyncGenerator<T> {
  if (n <= 0) return;
  for await (const item of source) {
    yield item;
    if (--n <= 0) return;
  }
}

it('waits while an outcome consumer is behind past the bound, and drops no event', async () => {
  const { prefix, redis } = fleet();
  const { createClient } = await import('@sluice/client');
  const client = createClient({ redis, prefix, outcomes: { maxBacklog: 300 } });
  try {
    await client.campaigns.create({ id: 'slowreader', content: { from: 'a@acme.test', subject: 'Hi', text: 'x' } });
    await client.outcomes.subscribe('crm', { from: 'now' });
    await client.campaigns.launch('slowreader', { total: 1_500, sample: { 'd0.test': 1 } });
    await waitFor(
      async () => (await client.campaigns.status('slowreader')).window.ready === WINDOW.minWindow,
      5_000,
      'window',
    );
    const count = 1_500;
    let waitedForOutcomes = 0;
    const injected = client.campaigns.inject(
      'slowreader',
      (function* () {
        for (let i = 0; i < count; i++) yield { to: `r${i}@d${i % 3}.test`, key: `k${i}` };
      })(),
      { chunkSize: 100, onProgress: (p) => void (p.waiting === 'outcomes' && waitedForOutcomes++) },
    );
    // Nobody reads: the backlog reaches the bound and the injection stops short of the list.
    await waitFor(() => waitedForOutcomes > 0, 30_000, 'the injection waiting for the consumer');
    const held = (await client.campaigns.status('slowreader')).cursor.position;
    expect(held).toBeLessThan(count);
    // The consumer catches up: the injection goes on, and every recipient's outcome arrives.
    const seen = new Map<string, number>();
    while (seen.size < count) {
      const events = await client.outcomes.read('crm', 'c1', { count: 200, blockMs: 1_000 });
      // The fleet's other campaigns' outcomes are on the stream too.
      for (const e of events)
        if (e.state === 'sent' && e.campaignId === 'slowreader') seen.set(e.key!, (seen.get(e.key!) ?? 0) + 1);
      if (events.length > 0)
        await client.outcomes.ack(
          'crm',
          events.map((e) => e.id),
        );
    }
    expect((await injected).accepted).toBe(count);
    expect([...seen.entries()].filter(([, n]) => n !== 1)).toEqual([]);
  } finally {
    await client.outcomes.unsubscribe('crm');
    await client.close();
  }
});

it('recipients of a receiver the launch re-check stopped end expired with the reason; the others are sent', async () => {
  const { client, redis, prefix, sandbox } = fleet();
  await client.campaigns.create({ id: 'stopper', content: { from: 'a@acme.test', subject: 'Hi', text: 'x' } });
  await client.campaigns.launch('stopper', { total: 50, sample: { 'd0.test': 1, 'd1.test': 1 } });
  // What the leader's re-check writes when a receiver's projection passes the deadline.
  const launches = createLaunchStore(redis, createKeys(prefix));
  const stored = (await launches.read('stopper'))!;
  const stop = { reason: 'its last recipient would be sent after the deadline', at: Date.now(), domains: ['d1.test'] };
  expect(await launches.write('stopper', stored.version, { ...stored.record, stopped: { d1: stop } })).toBe(true);

  const list = Array.from({ length: 50 }, (_, i) => ({ to: `s${i}@d${i % 5}.test` }));
  const result = await client.campaigns.inject('stopper', list);
  expect(result).toMatchObject({ accepted: 50, expired: 10 });
  const stopped = await client.messages.status('stopper_1');
  expect(stopped?.state).toBe('expired');
  expect(stopped?.lastReply).toMatch(
    /not injected: receiver d1 stopped: its last recipient would be sent after the deadline/,
  );
  await waitFor(async () => (await client.campaigns.status('stopper')).pending === 0, 20_000, 'all final');
  expect((await client.campaigns.status('stopper')).counts).toMatchObject({ sent: 40, expired: 10 });
  expect(sandbox.accepted().filter((a) => a.sluiceId?.startsWith('stopper_') && a.domain === 'd1.test')).toEqual([]);
});
