import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { beforeEach, describe, expect, it } from 'vitest';
import {
  HOME_COUNT,
  SluiceError,
  parseMessage,
  type Keys,
  type PriorityClass,
  type QueuedMessage,
  type Retention,
} from '@sluice/core';
import {
  createFeedback,
  createOutcomes,
  createStore,
  createSuppressions,
  injectedId,
  messageId,
  parseInjectedId,
  tenantGroup,
  type Outcomes,
  type Store,
} from '@sluice/store';
import { useRedisPrefix } from '../../../test/support/redis-prefix.js';

const r = useRedisPrefix();
let redis: Redis;
let keys: Keys;
let store: Store;
let outcomes: Outcomes;

const COMPACT: Record<PriorityClass, Retention> = { critical: 'full', high: 'full', normal: 'compact', low: 'compact' };
const GONE: Record<PriorityClass, Retention> = {
  critical: 'full',
  high: 'full',
  normal: 'until-acknowledged',
  low: 'until-acknowledged',
};
// An SES message id is 60 characters: the longest of the adapters'.
const sesId = (i: number): string => `0100018c${i.toString(16).padStart(8, '0')}-${randomUUID()}-000000`;

beforeEach(async () => {
  redis = r.redis;
  keys = r.keys;
  store = createStore({ redis, keys, recordTtlSeconds: 600 });
  outcomes = createOutcomes({ redis, keys, claimIdleMs: 100, recordTtlSeconds: 600 });
  await redis.hset(keys.campaign('news'), { createdAt: '1', tenantId: 'acme', priority: 'low' });
});

function message(id: string, campaignId?: string): QueuedMessage {
  return {
    ...parseMessage({
      from: 'a@acme.test',
      to: `${id}@example.test`,
      subject: 's',
      text: 't',
      tenantId: 'acme',
      ...(campaignId ? { campaignId, priority: 'low' } : {}),
    }),
    id,
    acceptedAt: Date.now(),
  };
}

async function sentCampaign(from: number, to: number, campaignId = 'news'): Promise<void> {
  for (let i = from; i < to; i += 500) {
    const ids = Array.from({ length: Math.min(500, to - i) }, (_, k) => injectedId(campaignId, i + k));
    await Promise.all(ids.map((id) => store.accept(message(id, campaignId))));
    await Promise.all(
      ids.map((id, k) =>
        store.finalize(id, 'sent', {
          campaignId,
          provider: 'ses',
          receiver: 'gmail',
          outcome: 'accepted',
          providerMessageId: sesId(i + k),
        }),
      ),
    );
  }
}

/**
 * What the test's keys hold: the `MEMORY USAGE` (every element counted) of each key under its
 * prefix, and how many there are. `used_memory` would also count the key table's buckets, which
 * Redis shrinks only when its cron gets to it: late on a loaded machine.
 */
async function heldBytes(): Promise<{ bytes: number; count: number }> {
  let bytes = 0;
  let count = 0;
  let cursor = '0';
  do {
    const [next, found] = await redis.scan(cursor, 'MATCH', `${r.prefix}:*`, 'COUNT', 5_000);
    cursor = next;
    for (const key of found) {
      bytes += Number((await redis.memory('USAGE', key, 'SAMPLES', 0)) ?? 0);
      count += 1;
    }
  } while (cursor !== '0');
  return { bytes, count };
}

describe('the outcome stream', () => {
  it('publishes every final state once, however often finalize is called, and a first deferral', async () => {
    await outcomes.subscribe('backend', { from: 'start' });
    const finals = ['sent', 'rejected', 'suppressed', 'expired', 'cancelled'] as const;
    const ids = finals.map((_, i) => injectedId('news', i));
    for (const [i, state] of finals.entries()) {
      await store.accept(message(ids[i]!, 'news'));
      const details = { campaignId: 'news', provider: 'ses', providerMessageId: `pm-${i}`, outcome: `f-${state}` };
      expect(await store.finalize(ids[i]!, state, details)).toBe(true);
      expect(await store.finalize(ids[i]!, state, details)).toBe(false);
      expect(await store.finalize(ids[i]!, 'rejected', details)).toBe(false);
    }
    // An attempt submitted and never answered, then given up: `unconfirmed`.
    const lost = messageId('acme');
    await store.accept(message(lost));
    await store.markRetrying(lost, {
      firstDeferral: true,
      reply: '',
      outcome: 'ambiguous',
      retryAt: Date.now(),
      hop: 1,
    });
    await store.markSubmitted(lost);
    await store.markAmbiguous(lost);
    await store.finalize(lost, 'expired', { ifAmbiguous: 'unconfirmed' });
    await store.finalize(lost, 'expired', { ifAmbiguous: 'unconfirmed' });

    const events = await outcomes.read('backend', 'one', { count: 100 });
    expect(events.map((e) => [e.messageId, e.state])).toEqual([
      ...finals.map((s, i) => [ids[i], s]),
      [lost, 'deferred'],
      [lost, 'unconfirmed'],
    ]);
    expect(events[0]).toMatchObject({
      campaignId: 'news',
      tenantId: 'acme',
      providerMessageId: 'pm-0',
      family: 'f-sent',
      key: undefined,
    });
    expect(events[5]).toMatchObject({ campaignId: undefined, tenantId: 'acme', family: 'ambiguous' });
    expect(Math.abs(events[0]!.at - Date.now())).toBeLessThan(10_000);
  });

  it('gives a crashed consumer its events again, and lets another claim a dead one’s', async () => {
    await outcomes.subscribe('backend');
    expect(await outcomes.subscribe('backend')).toEqual({ created: false });
    await sentCampaign(0, 6);
    const first = await outcomes.read('backend', 'a', { count: 3 });
    expect(first).toHaveLength(3);
    // `a` dies before acknowledging; started again under its name it gets the same three.
    expect((await outcomes.read('backend', 'a', { count: 10 })).map((e) => e.id)).toEqual(first.map((e) => e.id));
    // `b` takes the three new ones; once `a`'s are idle past claimIdleMs, `b` claims them.
    const fresh = await outcomes.read('backend', 'b', { count: 10 });
    expect(fresh.map((e) => e.messageId)).toEqual([3, 4, 5].map((i) => injectedId('news', i)));
    expect(
      await outcomes.ack(
        'backend',
        fresh.map((e) => e.id),
      ),
    ).toBe(3);
    await new Promise((done) => setTimeout(done, 150));
    const claimed = await outcomes.read('backend', 'b', { count: 10 });
    expect(claimed.map((e) => e.id)).toEqual(first.map((e) => e.id));
    expect(
      await outcomes.ack(
        'backend',
        claimed.map((e) => e.id),
      ),
    ).toBe(3);
    expect(await outcomes.read('backend', 'b')).toEqual([]);
  });

  it('waits for a new event when told to block', async () => {
    await outcomes.subscribe('backend');
    const blocking = redis.duplicate();
    try {
      const waiting = createOutcomes({ redis, blocking, keys }).read('backend', 'a', { blockMs: 5_000 });
      await new Promise((done) => setTimeout(done, 100));
      await sentCampaign(0, 1);
      expect((await waiting).map((e) => e.messageId)).toEqual([injectedId('news', 0)]);
    } finally {
      blocking.disconnect();
    }
  });

  it('trims only what every group acknowledged, and shrinks only those records', async () => {
    await outcomes.subscribe('billing');
    await outcomes.subscribe('crm');
    await sentCampaign(0, 10);
    const billing = await outcomes.read('billing', 'x', { count: 10 });
    await outcomes.ack(
      'billing',
      billing.map((e) => e.id),
    );
    const crm = await outcomes.read('crm', 'y', { count: 5 });
    await outcomes.ack(
      'crm',
      crm.slice(0, 3).map((e) => e.id),
    );

    expect(await outcomes.settle(COMPACT)).toEqual({ trimmed: 3, compacted: 3, deleted: 0 });
    expect(await outcomes.backlog()).toBe(7);
    expect(await redis.exists(keys.message(injectedId('news', 2)))).toBe(0);
    expect(await store.get(injectedId('news', 2))).toMatchObject({ state: 'sent', compact: true });
    // crm has not acknowledged #3 (read, pending) nor #5.. (not read): full records still.
    expect((await store.get(injectedId('news', 3)))?.to).toBe(`${injectedId('news', 3)}@example.test`);

    // crm catches up: the rest goes.
    await outcomes.ack(
      'crm',
      crm.slice(3).map((e) => e.id),
    );
    const rest = await outcomes.read('crm', 'y', { count: 10 });
    await outcomes.ack(
      'crm',
      rest.map((e) => e.id),
    );
    expect(await outcomes.settle(COMPACT)).toEqual({ trimmed: 7, compacted: 7, deleted: 0 });
    expect(await outcomes.backlog()).toBe(0);
    // A group removed no longer holds the stream.
    await sentCampaign(10, 12);
    await outcomes.read('crm', 'y');
    expect(await outcomes.unsubscribe('crm')).toBe(true);
    await outcomes.ack(
      'billing',
      (await outcomes.read('billing', 'x')).map((e) => e.id),
    );
    expect((await outcomes.settle(COMPACT)).trimmed).toBe(2);
  });

  it("holds the stream for a tenant's group only while it is at most tenantHold events behind", async () => {
    const held = createOutcomes({ redis, keys, recordTtlSeconds: 600, tenantHold: 5 });
    const tenant = tenantGroup('acme', 'crm');
    await held.subscribe('backend', { from: 'start' });
    await held.subscribe(tenant, { from: 'start' });
    await sentCampaign(0, 4);
    await held.ack(
      'backend',
      (await held.read('backend', 'b', { count: 100 })).map((e) => e.id),
    );
    // 4 behind: the tenant's group holds them, as a backend's would.
    expect((await held.settle(COMPACT)).trimmed).toBe(0);
    const first = await held.read(tenant, 'h', { count: 2 });
    await held.ack(
      tenant,
      first.map((e) => e.id),
    );
    expect((await held.settle(COMPACT)).trimmed).toBe(2);

    // 2 read and not acknowledged, then 6 more: 8 behind, past its hold of 5.
    const pending = await held.read(tenant, 'h', { count: 2 });
    await sentCampaign(4, 10);
    await held.ack(
      'backend',
      (await held.read('backend', 'b', { count: 100 })).map((e) => e.id),
    );
    expect((await held.settle(COMPACT)).trimmed).toBe(8);
    expect(await held.backlog()).toBe(0);
    // Its trimmed pending events are not given back; it goes on with the next event.
    expect(pending.map((e) => e.messageId)).toEqual([injectedId('news', 2), injectedId('news', 3)]);
    expect(await held.read(tenant, 'h')).toEqual([]);
    expect(Number(((await redis.xpending(keys.outcomes(0), tenant)) as [number])[0])).toBe(0);
    await sentCampaign(10, 11);
    expect((await held.read(tenant, 'h')).map((e) => e.messageId)).toEqual([injectedId('news', 10)]);
    // A backend's own group is never let go, however far behind.
    await held.unsubscribe(tenant);
    await sentCampaign(11, 20);
    expect((await held.settle(COMPACT)).trimmed).toBe(0);
  });

  it('keeps no event nobody subscribed to: the records shrink at the next pass', async () => {
    await sentCampaign(0, 4);
    expect(await outcomes.backlog()).toBe(4);
    expect(await outcomes.settle(COMPACT)).toEqual({ trimmed: 4, compacted: 4, deleted: 0 });
    expect(await outcomes.backlog()).toBe(0);
    expect(await outcomes.settle(COMPACT)).toEqual({ trimmed: 0, compacted: 0, deleted: 0 });
  });

  it('refuses an unknown group and bad arguments with their codes', async () => {
    await expect(outcomes.read('nobody', 'a')).rejects.toMatchObject({ code: 'unknown_group', path: 'group' });
    await outcomes.subscribe('backend');
    await expect(outcomes.read('nobody', 'a')).rejects.toMatchObject({ code: 'unknown_group' });
    await expect(outcomes.ack('nobody', ['0-1-0'])).rejects.toMatchObject({ code: 'unknown_group' });
    await expect(outcomes.subscribe('has space')).rejects.toMatchObject({ code: 'invalid_argument', path: 'group' });
    await expect(outcomes.read('backend', 'a', { count: 0 })).rejects.toMatchObject({ path: 'count' });
    await expect(outcomes.ack('backend', ['nope'])).rejects.toBeInstanceOf(SluiceError);
  });
});

/**
 * Sends and settles a first campaign, so what Redis grows once (its script cache, the
 * buffers of a first burst) is not counted per recipient of the measured one.
 */
async function warmUp(retention: Record<PriorityClass, Retention>): Promise<void> {
  await sentCampaign(0, 2_000, 'warmup');
  while ((await outcomes.settle(retention, 100_000)).trimmed > 0);
}

describe('records once their outcome is acknowledged', () => {
  it('compact: under 128 B per recipient, and messages.status still answers', async () => {
    const n = 20_000;
    await warmUp(COMPACT);
    const idle = await heldBytes();
    await sentCampaign(0, n);
    const full = await heldBytes();
    const started = Date.now();
    while ((await outcomes.settle(COMPACT, 100_000)).trimmed > 0);
    const settleMs = Date.now() - started;
    const after = await heldBytes();
    const perRecipient = (after.bytes - idle.bytes) / n;
    console.log(
      `records: ${Math.round((full.bytes - idle.bytes) / n)} B per recipient sent (full, with its event), ${perRecipient.toFixed(1)} B compact in ${after.count - idle.count} keys; settled in ${settleMs} ms`,
    );
    expect(perRecipient).toBeLessThanOrEqual(128);
    // Compact blocks, not a key a recipient.
    expect(after.count - idle.count).toBeLessThan(n / 50);
    expect(await redis.object('ENCODING', keys.compactRecords('news', 7))).toBe('listpack');

    const id = injectedId('news', 12_345);
    expect(await store.get(id)).toMatchObject({
      id,
      state: 'sent',
      campaignId: 'news',
      tenantId: 'acme',
      priority: 'low',
      provider: 'ses',
      compact: true,
    });
    const status = await store.get(id);
    expect(status?.providerMessageId).toMatch(/^0100018c00003039-/);
    expect(Math.abs(Date.now() - (status?.finalAt ?? 0))).toBeLessThan(120_000);
    // Injected again (a resumed injection, a stale intake job): known, not sent twice.
    expect(await store.accept(message(id, 'news'))).toEqual({ created: false, state: 'sent' });
    expect((await store.peek(id, 'acme', 'x@example.test')).state).toBe('sent');
    expect(await redis.ttl(keys.compactRecords('news', 0))).toBeGreaterThan(500);
  });

  it('until-acknowledged: nothing per recipient', async () => {
    const n = 20_000;
    await warmUp(GONE);
    const idle = await heldBytes();
    await sentCampaign(0, n);
    let deleted = 0;
    for (;;) {
      const pass = await outcomes.settle(GONE, 100_000);
      deleted += pass.deleted;
      if (pass.trimmed === 0) break;
    }
    const after = await heldBytes();
    const perRecipient = (after.bytes - idle.bytes) / n;
    console.log(
      `records: ${perRecipient.toFixed(2)} B per recipient until-acknowledged in ${after.count - idle.count} keys`,
    );
    expect(deleted).toBe(n);
    expect(perRecipient).toBeLessThan(4);
    // Its parts in the sixteen homes are all it adds: its counters and its bitmap of records gone.
    expect(after.count - idle.count).toBeLessThanOrEqual(2 * HOME_COUNT);
    const id = injectedId('news', 5);
    expect(await store.get(id)).toBeNull();
    // Its bit (1 a recipient) still refuses a second injection, and admission sees it final.
    expect(await store.accept(message(id, 'news'))).toEqual({ created: false, state: 'final' });
    expect((await store.peek(id, 'acme', 'x@example.test')).state).toBe('final');
    expect(await store.accept(message(injectedId('news', n), 'news'))).toMatchObject({ created: true });
  });

  it('failures keep their full record and reply; a transactional success keeps its whole record', async () => {
    const bad = injectedId('news', 1);
    await store.accept(message(bad, 'news'));
    await store.finalize(bad, 'rejected', { campaignId: 'news', provider: 'ses', reply: '550 5.1.1 no such user' });
    const tx = messageId('acme');
    await store.accept({ ...message(tx), priority: 'normal' });
    await store.finalize(tx, 'sent', { provider: 'ses', receiver: 'gmail', providerMessageId: 'pm-tx' });
    expect(await outcomes.settle(COMPACT)).toEqual({ trimmed: 2, compacted: 0, deleted: 0 });
    expect(await store.get(bad)).toMatchObject({ state: 'rejected', lastReply: '550 5.1.1 no such user' });
    expect((await store.get(bad))?.to).toContain('@example.test');
    // `send` stays as it was: support looks a transactional message up with its address and attempts.
    const whole = await store.get(tx);
    expect(whole).toMatchObject({ state: 'sent', provider: 'ses', providerMessageId: 'pm-tx', attempts: 0 });
    expect(whole?.to).toContain('@');
    expect(whole?.compact).toBeUndefined();
  });

  it('a bounce after compaction still suppresses, and the record still names its provider', async () => {
    const id = injectedId('news', 70);
    await sentCampaign(70, 71);
    await outcomes.settle(COMPACT);
    const feedback = createFeedback({ redis, keys });
    const result = await feedback.apply({
      provider: 'ses',
      kind: 'bounced_hard',
      recipient: `${id}@example.test`,
      messageId: id,
      tenantId: 'acme',
      at: Date.now(),
      reason: 'smtp; 550 5.1.1 User unknown',
      eventId: randomUUID(),
    });
    expect(result).toEqual({ outcome: 'suppressed', tenantId: 'acme' });
    expect(await createSuppressions({ redis, keys }).get('acme', `${id}@example.test`)).toMatchObject({
      source: 'bounce',
    });
    // What the api counts the bounce under (apps/api countSignal): provider, tenant, campaign.
    expect(await store.get(id)).toMatchObject({ provider: 'ses', tenantId: 'acme', campaignId: 'news' });
  });
});

it('injected ids: `<campaign>_<position>`, split at the last `_`', () => {
  expect(injectedId('spring_sale', 42)).toBe('spring_sale_42');
  expect(parseInjectedId('spring_sale_42')).toEqual({ campaignId: 'spring_sale', position: 42 });
  expect(parseInjectedId(messageId('acme'))).toBeUndefined();
  expect(parseInjectedId('news_')).toBeUndefined();
  expect(parseInjectedId('news_1a')).toBeUndefined();
  expect(parseInjectedId('_1')).toBeUndefined();
});
