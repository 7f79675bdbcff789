import type { Redis } from 'ioredis';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseMessage, type Keys, type QueuedMessage } from '@sluice/core';
import {
  createCampaignArchiver,
  createCampaignWork,
  createCampaigns,
  createQueues,
  createStore,
  messageId,
  type CampaignArchiver,
  type Campaigns,
  type Queues,
  type Store,
} from '@sluice/store';
import { useRedisPrefix } from '../../../test/support/redis-prefix.js';

const r = useRedisPrefix();
let redis: Redis;
let keys: Keys;
let queues: Queues;
let store: Store;
let campaigns: Campaigns;
let archiver: CampaignArchiver;

const SETTINGS = { archiveAfterMs: 1_000, archivedRetentionMs: 60_000, archiveCheckMs: 1 };

beforeEach(() => {
  redis = r.redis;
  keys = r.keys;
  queues = createQueues({ redis, keys });
  store = createStore({ redis, keys, recordTtlSeconds: 60 });
  campaigns = createCampaigns({ redis, keys, queues, store });
  archiver = createCampaignArchiver({ redis, keys, settings: SETTINGS });
});
afterEach(async () => {
  await archiver.close();
  await queues.close();
});

/** Enqueues a message of the campaign as the client does: job first, then record. */
async function enqueue(campaignId: string): Promise<string> {
  const m: QueuedMessage = {
    ...parseMessage({ from: 'a@acme.test', to: 'b@example.com', subject: 's', text: 't', campaignId }),
    priority: 'low',
    id: messageId('default'),
    acceptedAt: Date.now(),
  };
  await queues.campaign(campaignId).add('send', m, { jobId: m.id });
  await store.accept(m);
  return m.id;
}

/** A campaign whose one message was admitted (its job gone) and sent. */
async function finished(id: string): Promise<string> {
  await campaigns.create({ id });
  const m = await enqueue(id);
  await queues.campaign(id).remove(m);
  await store.finalize(m, 'sent', { campaignId: id, provider: 'ses' });
  return m;
}

const queueKeys = async (id: string): Promise<string[]> => redis.keys(`${keys.prefix}:${keys.campaignQueue(id)}:*`);

describe('archiving a campaign', () => {
  it('archives a finished campaign archiveAfterMs after the leader first found it finished, and it still answers status', async () => {
    const m = await finished('spring');
    const t0 = Date.now();
    expect(await archiver.run(t0)).toBe(0); // found finished: stamped
    expect(await archiver.run(t0 + 500)).toBe(0); // not long enough
    expect(await campaigns.ids()).toEqual(['spring']);
    expect(await archiver.run(t0 + 1_001)).toBe(1);

    expect(await campaigns.ids()).toEqual([]);
    expect(await campaigns.archivedIds()).toEqual(['spring']);
    const s = await campaigns.status('spring');
    expect(s.archive).toMatchObject({ at: t0 + 1_001, by: 'sluice', content: null });
    expect(s.counts).toMatchObject({ accepted: 1, sent: 1 });
    expect(s.pending).toBe(0);
    // Its queue is gone, every key of it; the message keeps its record (and its TTL).
    expect(await queueKeys('spring')).toEqual([]);
    expect((await store.get(m))?.state).toBe('sent');
    // The record expires after the retention.
    const ttl = await redis.pttl(keys.campaign('spring'));
    expect(ttl).toBeGreaterThan(50_000);
    expect(ttl).toBeLessThanOrEqual(SETTINGS.archivedRetentionMs);
    // Archived once: a second pass changes nothing.
    expect(await archiver.run(t0 + 5_000)).toBe(0);
  });

  it('starts the wait again when the campaign took mail since it was found finished', async () => {
    await finished('spring');
    const t0 = Date.now();
    await archiver.run(t0);
    const again = await enqueue('spring');
    await archiver.run(t0 + 1_001); // not finished now: the stamp goes
    await queues.campaign('spring').remove(again);
    await store.finalize(again, 'sent', { campaignId: 'spring', provider: 'ses' });
    // The chore marked it when it found the job (no writer had); a scheduler's poll prunes it
    // once its queue is empty, as here.
    const work = createCampaignWork({ redis, keys });
    expect(await work.prune('spring', (await work.read()).get('spring')!)).toBe(true);
    expect(await archiver.run(t0 + 1_002)).toBe(0); // finished again: stamped anew
    expect(await archiver.run(t0 + 2_001)).toBe(0);
    expect(await archiver.run(t0 + 2_003)).toBe(1);
  });

  it('never archives an unused campaign by itself, nor one with work', async () => {
    await campaigns.create({ id: 'unused' });
    await finished('busy');
    await createCampaignWork({ redis, keys }).mark(['busy']);
    const t0 = Date.now();
    for (const dt of [0, 2_000, 4_000]) expect(await archiver.run(t0 + dt)).toBe(0);
    expect(await campaigns.ids()).toEqual(['busy', 'unused']);
  });

  it('marks a campaign whose queue has jobs but no work mark (a producer that died between its add and its mark)', async () => {
    await campaigns.create({ id: 'spring' });
    await enqueue('spring'); // the test's enqueue adds the job and the record, and marks nothing
    const work = createCampaignWork({ redis, keys });
    expect(await work.has('spring')).toBe(false);
    await archiver.run(Date.now());
    expect(await work.has('spring')).toBe(true);
  });

  it('refuses to archive or delete a campaign that is not finished, saying why', async () => {
    await campaigns.create({ id: 'spring' });
    for (let i = 0; i < 12; i++) await enqueue('spring');
    await expect(campaigns.archive('spring')).rejects.toMatchObject({
      code: 'campaign_not_finished',
      message: 'campaign spring is not finished: 12 messages not yet final; cancel it first',
    });
    await expect(campaigns.delete('spring')).rejects.toMatchObject({ code: 'campaign_not_finished' });
    await expect(campaigns.archive('nope')).rejects.toMatchObject({ code: 'unknown_campaign' });
    expect(await campaigns.ids()).toEqual(['spring']);
  });

  it('archives a cancelled campaign by hand, and then refuses to change it', async () => {
    await campaigns.create({ id: 'spring' });
    await enqueue('spring');
    await campaigns.cancel('spring', { actor: 'ops', reason: 'wrong price', waitMs: 0 });
    expect(await campaigns.archive('spring', { actor: 'ops' })).toBe(true);
    expect(await campaigns.archive('spring', { actor: 'ops' })).toBe(false);
    const s = await campaigns.status('spring');
    expect(s).toMatchObject({ cancelled: true, archive: { by: 'ops' }, counts: { accepted: 1, cancelled: 1 } });
    await expect(campaigns.pause('spring')).rejects.toMatchObject({ code: 'campaign_archived' });
    await expect(campaigns.resume('spring')).rejects.toMatchObject({ code: 'campaign_archived' });
    await expect(campaigns.cancel('spring', { actor: 'ops', reason: 'x', waitMs: 0 })).rejects.toMatchObject({
      code: 'campaign_archived',
    });
    await expect(campaigns.create({ id: 'spring' })).rejects.toMatchObject({ code: 'campaign_exists' });
    // Audited like the other campaign actions.
    const audit = await redis.xrange(keys.audit(), '-', '+');
    expect(audit.map(([, f]) => f.slice(0, 2).concat(f.slice(6, 8)))).toContainEqual([
      'action',
      'archive',
      'name',
      'spring',
    ]);
  });

  it('deletes an archived campaign for good: its id is free, its messages keep their records', async () => {
    const m = await finished('spring');
    await campaigns.archive('spring');
    await campaigns.delete('spring', { actor: 'ops' });
    expect(await campaigns.archivedIds()).toEqual([]);
    await expect(campaigns.status('spring')).rejects.toMatchObject({ code: 'unknown_campaign' });
    expect((await store.get(m))?.state).toBe('sent');
    await campaigns.create({ id: 'spring' });
    expect(await campaigns.ids()).toEqual(['spring']);
  });

  it('finishes the queue removal a crash left after the archive step', async () => {
    await finished('spring');
    await campaigns.archive('spring');
    // What a crash right after the script leaves: the record archived, the queue still there.
    await queues.campaign('spring').add('send', { id: 'x' }, { jobId: 'x' });
    await redis.sadd(keys.campaignsArchiving(), 'spring');
    expect(await queueKeys('spring')).not.toEqual([]);
    await archiver.run(Date.now());
    expect(await queueKeys('spring')).toEqual([]);
    expect(await redis.scard(keys.campaignsArchiving())).toBe(0);
  });

  it('forgets archived records past their retention', async () => {
    await finished('spring');
    const t0 = Date.now();
    await campaigns.archive('spring', { now: t0 });
    await archiver.run(t0 + SETTINGS.archivedRetentionMs + 1);
    expect(await campaigns.archivedIds()).toEqual([]);
    expect(await redis.exists(keys.campaign('spring'))).toBe(0);
  });
});
