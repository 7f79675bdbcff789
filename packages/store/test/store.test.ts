import type { Redis } from 'ioredis';
import { beforeEach, expect, it } from 'vitest';
import { homeOf, parseMessage, type Keys, type QueuedMessage } from '@sluice/core';
import { createStore, injectedId, messageId, type Store } from '@sluice/store';
import { useRedisPrefix } from '../../../test/support/redis-prefix.js';

const r = useRedisPrefix();
let redis: Redis;
let keys: Keys;
let store: Store;

beforeEach(() => {
  redis = r.redis;
  keys = r.keys;
  store = createStore({ redis, keys, recordTtlSeconds: 60 });
});

const message = (campaignId?: string): QueuedMessage => ({
  ...parseMessage({ from: 'a@acme.test', to: 'B@example.test', subject: 's', text: 't', campaignId }),
  id: messageId('default'),
  acceptedAt: Date.now(),
});

it('keeps the first record of an id and counts it once', async () => {
  await redis.hset(keys.campaign('c1'), 'createdAt', '1');
  const m = message('c1');
  expect(await store.accept(m)).toEqual({ created: true, state: 'queued' });
  expect(await store.accept(m)).toEqual({ created: false, state: 'queued' });
  expect((await store.campaignCounts('c1')).accepted).toBe(1);
});

it('reaches exactly one final state, which never changes', async () => {
  const m = message('c1');
  await store.accept(m);
  expect(await store.finalize(m.id, 'sent', { campaignId: 'c1', provider: 'ses', receiver: 'example.test' })).toBe(
    true,
  );
  expect(await store.finalize(m.id, 'rejected', { campaignId: 'c1' })).toBe(false);
  expect(await store.markSending(m.id)).toMatchObject({ result: 'final', state: 'sent' });
  expect((await store.get(m.id))!.state).toBe('sent');
  expect(await store.campaignCounts('c1')).toMatchObject({ sent: 1, rejected: 0 });
  expect(await redis.ttl(keys.message(m.id))).toBeGreaterThan(0);
});

it('finalizes only from the states it is told to', async () => {
  const m = message();
  await store.accept(m);
  await store.markSending(m.id);
  expect(await store.finalize(m.id, 'cancelled', { from: ['queued', 'dispatched', 'retrying'] })).toBe(false);
  expect((await store.get(m.id))!.state).toBe('sending');
  expect(await store.finalize(m.id, 'sent')).toBe(true);
});

it('tells an attempt cut off after submitting (ambiguous) from one cut off before', async () => {
  const m = message();
  await store.accept(m);
  await store.markSending(m.id);
  // The worker died before the request was out: the next attempt is a clean one.
  expect(await store.markSending(m.id)).toMatchObject({
    result: 'moved',
    ambiguous: false,
    attempts: 2,
  });
  // Marked submitted (its request went out in full), then its worker died: the next is ambiguous.
  expect(await store.markSubmitted(m.id)).toMatchObject({ result: 'moved', attempts: 3 });
  expect(await store.markSending(m.id)).toMatchObject({
    result: 'moved',
    ambiguous: true,
    attempts: 4,
  });
  expect((await store.get(m.id))!.ambiguous).toBe(1);
});

it('ends unconfirmed instead (ifAmbiguous) only when the record counts an ambiguous attempt, and counts that', async () => {
  await redis.hset(keys.campaign('c1'), 'createdAt', '1');
  const [clean, lost] = [message('c1'), message('c1')];
  for (const m of [clean, lost]) {
    await store.accept(m);
    await store.markSending(m.id);
  }
  await store.markSubmitted(lost.id);
  await store.markAmbiguous(lost.id);
  const giveUp = { campaignId: 'c1', outcome: 'lifetime over', ifAmbiguous: 'unconfirmed' } as const;
  expect(await store.finalize(clean.id, 'expired', giveUp)).toBe(true);
  expect(await store.finalize(lost.id, 'expired', giveUp)).toBe(true);
  expect(await store.get(clean.id)).toMatchObject({ state: 'expired', ambiguous: 0 });
  expect(await store.get(lost.id)).toMatchObject({ state: 'unconfirmed', ambiguous: 1, lastOutcome: 'lifetime over' });
  expect(await store.campaignCounts('c1')).toMatchObject({ accepted: 2, expired: 1, unconfirmed: 1 });
  // Final like the others: never changed, never attempted again.
  expect(await store.finalize(lost.id, 'sent')).toBe(false);
  expect(await store.markSending(lost.id)).toMatchObject({
    result: 'final',
    state: 'unconfirmed',
  });
});

it('moves only from the states a move is made from, and holds attempts of a paused campaign', async () => {
  const m = message('c1');
  await store.accept(m);
  await store.markSending(m.id);
  expect(await store.markDispatched(m.id)).toMatchObject({
    result: 'skipped',
    state: 'sending',
  });
  expect(await store.markAmbiguous(m.id)).toMatchObject({ result: 'skipped', state: 'sending' });
  await store.setCampaignPaused('c1', true);
  expect(await store.markSending(m.id, { campaignId: 'c1' })).toMatchObject({
    result: 'held',
    attempts: 1,
  });
  await store.setCampaignPaused('c1', false);
  expect(await store.markSending(m.id, { campaignId: 'c1' })).toMatchObject({
    result: 'moved',
    attempts: 2,
  });
});

it('suppresses a recipient for its tenant, case-insensitively', async () => {
  const m = message();
  await store.accept(m);
  await store.finalize(m.id, 'rejected', {
    suppress: true,
    to: m.to,
    tenantId: 'default',
    outcome: 'bad_recipient',
    reply: '550 5.1.1 no such user',
  });
  expect(await store.suppressed('default', 'b@EXAMPLE.test')).toMatch(/bad_recipient: 550 5.1.1/);
  expect(await store.suppressed('other', 'b@example.test')).toBeNull();
  expect(await store.peek('m-none', 'default', 'b@example.test')).toEqual({
    state: null,
    suppressed: expect.stringMatching(/550/) as unknown,
  });
});

it('marks a send submitted once: the attempt counted, refused when final, paused or submitted already', async () => {
  await redis.hset(keys.campaign('c2'), 'createdAt', '1');
  const m = message('c2');
  await store.accept(m);
  await store.noteHeld(m.id, { by: 'receiver', key: 'example.test', untilMs: Date.now(), reason: 'quota busy' });
  const submit = () => store.markSubmitted(m.id, { campaignId: 'c2' });
  expect(await submit()).toMatchObject({ result: 'moved', state: 'queued', attempts: 1 });
  // The held note is gone with the mark; a second mark (another run of the job) is refused.
  expect(await redis.hmget(keys.message(m.id), 'heldBy', 'heldReason')).toEqual([null, null]);
  expect(await submit()).toMatchObject({ result: 'skipped', state: 'submitted', attempts: 1 });
  // Found submitted: counted ambiguous from `submitted` only, then a resend is marked again.
  expect(await store.markFoundSubmitted(m.id)).toMatchObject({ result: 'moved' });
  expect(await store.markFoundSubmitted(m.id)).toMatchObject({ result: 'skipped' });
  await store.setCampaignPaused('c2', true);
  expect(await submit()).toMatchObject({ result: 'held', attempts: 1 });
  await store.setCampaignPaused('c2', false);
  expect(await submit()).toMatchObject({ result: 'moved', attempts: 2 });
  expect(await store.get(m.id)).toMatchObject({ state: 'submitted', attempts: 2, ambiguous: 1 });
  await store.finalize(m.id, 'sent', { campaignId: 'c2' });
  expect(await submit()).toMatchObject({ result: 'final', state: 'sent' });
  expect(await store.look(m.id, 'c2')).toEqual({ state: 'sent', paused: false });
});

it('gives a message back to admission by name: a retry and a requeue keep their reply, family and hop', async () => {
  const m = message();
  await store.accept(m);
  await store.noteHeld(m.id, { by: 'receiver', key: 'example.test', untilMs: Date.now(), reason: 'quota busy' });
  expect(await store.markDispatched(m.id)).toMatchObject({ result: 'moved', state: 'queued' });
  // Admission's move clears the scheduler's note: nothing holds it any more.
  expect((await store.inspect(m.id))?.held).toBeUndefined();
  await store.markSubmitted(m.id);
  const retryAt = Date.now() + 60_000;
  const reply = `421 ${'x'.repeat(3000)}`;
  expect(await store.markRetrying(m.id, { reply, outcome: 'throttled', retryAt, hop: 1 })).toMatchObject({
    result: 'moved',
    state: 'submitted',
  });
  expect(await store.inspect(m.id)).toMatchObject({
    record: { state: 'retrying', lastReply: reply.slice(0, 2000), lastOutcome: 'throttled' },
    retryAt,
    hop: 1,
  });
  expect(await store.markRequeued(m.id, { reason: 'circuit open', hop: 2 })).toMatchObject({ result: 'moved' });
  expect(await store.get(m.id)).toMatchObject({ state: 'queued', lastOutcome: 'circuit open', attempts: 1 });
  expect(await store.inspect(m.id)).toMatchObject({ hop: 2 });
  expect(await store.exists(m.id)).toBe(true);
  expect(await store.exists('m-none')).toBe(false);
  expect(await store.inspect('m-none')).toBeNull();
  expect(await store.markSending('m-none')).toMatchObject({ result: 'missing' });
});

it('marks a batch submitted all or none: one record that may not go stops the mark for every one', async () => {
  await redis.hset(keys.campaign('c5'), 'createdAt', '1');
  // One block of a campaign shares a message home, as a batch's recipients do.
  const batch = [0, 1, 2, 3].map((position) => ({ ...message('c5'), id: injectedId('c5', position) }));
  for (const m of batch) await store.accept(m);
  await store.noteHeld(batch[1]!.id, { by: 'receiver', key: 'example.test', untilMs: Date.now(), reason: 'busy' });
  await store.markSending(batch[2]!.id);
  await store.finalize(batch[3]!.id, 'cancelled', { campaignId: 'c5' });
  const ids = batch.map((m) => m.id);
  const submit = (of: string[]) => store.markSubmittedBatch(of, { campaignId: 'c5' });
  // The cancelled one refuses the mark: nothing is written, not even the others' attempts.
  expect(await submit(ids)).toEqual({
    result: 'refused',
    refused: [{ index: 3, result: 'final', state: 'cancelled' }],
  });
  expect((await store.get(ids[0]!))!).toMatchObject({ state: 'queued', attempts: 0 });
  // Without it, all three move, each counting its own attempt; the held note is gone.
  expect(await submit(ids.slice(0, 3))).toEqual({ result: 'moved', attempts: [1, 1, 2] });
  expect(await redis.hget(keys.message(ids[1]!), 'heldBy')).toBeNull();
  for (const id of ids.slice(0, 3)) expect((await store.get(id))!.state).toBe('submitted');
  // Another run marking them again is refused for each: their requests are out already.
  const again = await submit(ids.slice(0, 2));
  expect(again).toMatchObject({
    result: 'refused',
    refused: [
      { index: 0, result: 'skipped' },
      { index: 1, result: 'skipped' },
    ],
  });
  // A paused campaign holds the whole batch; records of other homes are never one batch.
  const fresh = [4, 5].map((position) => ({ ...message('c5'), id: injectedId('c5', position) }));
  for (const m of fresh) await store.accept(m);
  await store.setCampaignPaused('c5', true);
  expect(await submit(fresh.map((m) => m.id))).toEqual({ result: 'held' });
  await expect(submit([fresh[0]!.id, injectedId('c5', 64)])).rejects.toThrow(/spans message homes/);
});

it('ends a batch’s recipients in one script: each once, counted and published, one already final left as it is', async () => {
  await redis.hset(keys.campaign('c6'), 'createdAt', '1');
  const batch = [0, 1, 2].map((position) => ({ ...message('c6'), id: injectedId('c6', position) }));
  for (const m of batch) await store.accept(m);
  await store.finalize(batch[1]!.id, 'cancelled', { campaignId: 'c6' });
  const home = homeOf(batch[0]!.id);
  const before = await redis.xlen(keys.outcomes(home));
  const done = await store.finalizeBatch(
    'sent',
    batch.map((m, i) => ({
      id: m.id,
      d: { campaignId: 'c6', provider: 'ses', outcome: 'accepted', providerMessageId: `pm-${i}` },
    })),
  );
  expect(done).toEqual([true, false, true]);
  expect(await store.get(batch[0]!.id)).toMatchObject({ state: 'sent', providerMessageId: 'pm-0' });
  expect((await store.get(batch[1]!.id))?.state).toBe('cancelled');
  expect(await store.campaignCounts('c6')).toMatchObject({ accepted: 3, sent: 2, cancelled: 1 });
  // One event each for the two ended now, after the cancelled one's.
  const events = await redis.xrange(keys.outcomes(home), '-', '+');
  expect(events.slice(before).map(([, f]) => [f[1], f[3], f[11]])).toEqual([
    [batch[0]!.id, 'sent', 'pm-0'],
    [batch[2]!.id, 'sent', 'pm-2'],
  ]);
  // Messages of two homes are never one script.
  await expect(
    store.finalizeBatch('sent', [
      { id: injectedId('c6', 3), d: { campaignId: 'c6' } },
      { id: injectedId('c6', 64), d: { campaignId: 'c6' } },
    ]),
  ).rejects.toThrow(/more than one home/);
});
