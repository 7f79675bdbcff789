import type { Redis } from 'ioredis';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { homeOf, parseMessage, type DispatchJobData, type Keys, type QueuedMessage } from '@sluice/core';
import {
  createCampaigns,
  createFillingBatches,
  createQueues,
  createStore,
  messageId,
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

beforeEach(() => {
  redis = r.redis;
  keys = r.keys;
  queues = createQueues({ redis, keys });
  store = createStore({ redis, keys, recordTtlSeconds: 60 });
  campaigns = createCampaigns({ redis, keys, queues, store });
});
afterEach(async () => {
  await queues.close();
});

/** Enqueues a message of the campaign as the client does: job first, then record. */
async function enqueue(campaignId: string, to: string): Promise<string> {
  const m: QueuedMessage = {
    ...parseMessage({ from: 'a@acme.test', to, subject: 's', text: 't', campaignId }),
    priority: 'low',
    id: messageId('default'),
    acceptedAt: Date.now(),
  };
  await queues.campaign(campaignId).add('send', m, { jobId: m.id });
  await store.accept(m);
  return m.id;
}

/** What "paused" means: the flag the workers check, and the queue admission reads. */
async function pausedState(id: string): Promise<{ flag: string | null; queue: boolean }> {
  return { flag: await redis.hget(keys.campaign(id), 'paused'), queue: await queues.campaign(id).isPaused() };
}

describe('the campaign lifecycle', () => {
  it('creates a campaign once, and lists it', async () => {
    const c = await campaigns.create({ id: 'spring', name: 'Spring sale', priority: 'normal', rate: 10 });
    expect(c).toMatchObject({ id: 'spring', name: 'Spring sale', tenantId: 'default', priority: 'normal', rate: 10 });
    expect(await campaigns.get('spring')).toEqual(c);
    await expect(campaigns.create({ id: 'spring' })).rejects.toMatchObject({ code: 'campaign_exists', path: 'id' });
    await expect(campaigns.create({ id: 'bad id' })).rejects.toMatchObject({ code: 'invalid_argument', path: 'id' });
    expect(await campaigns.get('nope')).toBeNull();
    expect(await campaigns.ids()).toContain('spring');
  });

  it('pauses with the flag and the queue, and resumes both', async () => {
    await campaigns.create({ id: 'summer' });
    await campaigns.pause('summer', { actor: 'tester' });
    expect(await pausedState('summer')).toEqual({ flag: '1', queue: true });
    expect(await campaigns.resume('summer', { actor: 'tester' })).toBe(true);
    expect(await pausedState('summer')).toEqual({ flag: null, queue: false });
    for (const call of [
      () => campaigns.pause('nope'),
      () => campaigns.resume('nope'),
      () => campaigns.status('nope'),
    ]) {
      await expect(call()).rejects.toMatchObject({ name: 'SluiceError', code: 'unknown_campaign', path: 'campaignId' });
    }
  });

  it('tells its status: settings, pause, cancel, counters and queue', async () => {
    await campaigns.create({ id: 'autumn', name: 'Autumn' });
    await enqueue('autumn', 'r1@example.test');
    await enqueue('autumn', 'r2@example.test');
    expect(await campaigns.status('autumn')).toMatchObject({
      id: 'autumn',
      name: 'Autumn',
      paused: false,
      cancelled: false,
      counts: { accepted: 2, sent: 0, cancelled: 0 },
      pending: 2,
      queue: { waiting: 2, delayed: 0, active: 0 },
    });
    await campaigns.pause('autumn');
    expect(await campaigns.status('autumn')).toMatchObject({ paused: true, cancelled: false, queue: { waiting: 2 } });
  });

  it('cancels in order: every message not yet final ends cancelled, its jobs are gone', async () => {
    await campaigns.create({ id: 'winter' });
    const ids = [await enqueue('winter', 'w1@example.test'), await enqueue('winter', 'w2@example.test')];
    await store.finalize(ids[1]!, 'sent', { campaignId: 'winter', provider: 'ses' });
    const r = await campaigns.cancel('winter', { actor: 'tester', reason: 'wrong price', waitMs: 0 });
    expect(r).toEqual({
      id: 'winter',
      cancelled: 1,
      alreadyFinal: 1,
      removedJobs: 2,
      finishedInFlight: 0,
      stillInFlight: [],
    });
    expect(await store.get(ids[0]!)).toMatchObject({
      state: 'cancelled',
      lastReply: 'cancelled by tester: wrong price',
    });
    expect(await store.get(ids[1]!)).toMatchObject({ state: 'sent' });
    expect(await redis.hmget(keys.campaign('winter'), 'cancelled', 'cancelledBy', 'cancelReason')).toEqual([
      '1',
      'tester',
      'wrong price',
    ]);
    expect(await campaigns.status('winter')).toMatchObject({
      paused: true,
      cancelled: true,
      pending: 0,
      counts: { cancelled: 1, sent: 1 },
      queue: { waiting: 0, delayed: 0, active: 0 },
    });
    await expect(campaigns.cancel('nope', { actor: 'tester', reason: 'x', waitMs: 0 })).rejects.toMatchObject({
      code: 'unknown_campaign',
    });
  });

  it('cancels the recipients a scheduler holds in a batch being filled (in Redis, no job yet)', async () => {
    await campaigns.create({ id: 'spring' });
    const ids = [await enqueue('spring', 's1@example.test'), await enqueue('spring', 's2@example.test')];
    // Admitted and put in a dispatch batch due later: their campaign jobs are done, no dispatch job yet.
    const admitted = await Promise.all(ids.map(async (id) => (await queues.campaign('spring').getJob(id))!.data));
    for (const id of ids) await queues.campaign('spring').remove(id);
    const filling = createFillingBatches(redis, keys);
    const home = homeOf(ids[0]!);
    await filling.put(home, 's1.0', Date.now() + 60_000, [admitted[0] as DispatchJobData]);
    await filling.put(homeOf(ids[1]!), 's1.1', Date.now() + 60_000, [admitted[1] as DispatchJobData]);
    const r = await campaigns.cancel('spring', { actor: 'tester', reason: 'typo', waitMs: 0 });
    expect(r).toMatchObject({ cancelled: 2, alreadyFinal: 0, stillInFlight: [] });
    for (const id of ids) expect(await store.get(id)).toMatchObject({ state: 'cancelled' });
  });

  it('refuses to resume a cancelled campaign, and changes nothing; the governor’s skip leaves it too', async () => {
    await campaigns.create({ id: 'gone' });
    await enqueue('gone', 'g1@example.test');
    await campaigns.cancel('gone', { actor: 'tester', reason: 'test', waitMs: 0 });
    const error = await campaigns.resume('gone', { actor: 'tester' }).catch((e: unknown) => e);
    expect(error).toMatchObject({
      name: 'SluiceError',
      code: 'campaign_cancelled',
      path: 'campaignId',
      action: 'permanent',
    });
    expect((error as Error).message).toBe(
      'campaign gone was cancelled: it cannot be resumed (cancelling cannot be undone)',
    );
    expect(await pausedState('gone')).toEqual({ flag: '1', queue: true });
    expect(await campaigns.resume('gone', { actor: 'governor', ifCancelled: 'skip' })).toBe(false);
    expect(await pausedState('gone')).toEqual({ flag: '1', queue: true });
  });

  it('lets a cancel that lands while a resume runs win: the campaign stays paused', async () => {
    await campaigns.create({ id: 'race' });
    await campaigns.pause('race');
    // The queue's resume is where a cancel can come in between: after the resume's check,
    // before it clears the flag. The cancel's first step (its flags) is done right there.
    const queue = queues.campaign('race');
    const resume = queue.resume.bind(queue);
    queue.resume = async () => {
      await resume();
      await redis.hset(keys.campaign('race'), { paused: '1', cancelled: '1' });
    };
    try {
      await expect(campaigns.resume('race')).rejects.toMatchObject({ code: 'campaign_cancelled' });
    } finally {
      queue.resume = resume;
    }
    expect(await pausedState('race')).toEqual({ flag: '1', queue: true });
  });

  it('makes a queue paused outside Sluice the campaign’s pause', async () => {
    await campaigns.create({ id: 'outside' });
    expect(await campaigns.adoptQueuePause('outside')).toBe(false);
    await queues.campaign('outside').pause();
    expect(await campaigns.adoptQueuePause('outside')).toBe(true);
    expect(await pausedState('outside')).toEqual({ flag: '1', queue: true });
    expect(await campaigns.adoptQueuePause('outside')).toBe(false);
  });
});
