import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { beforeEach, describe, expect, it } from 'vitest';
import { parseMessage, type Keys, type QueuedMessage } from '@sluice/core';
import type { DeliveryEvent } from '@sluice/events';
import {
  createFeedback,
  createStore,
  createSuppressions,
  messageId,
  type Feedback,
  type Store,
  type Suppressions,
} from '@sluice/store';
import { useRedisPrefix } from '../../../test/support/redis-prefix.js';

const r = useRedisPrefix();
let redis: Redis;
let keys: Keys;
let store: Store;
let feedback: Feedback;
let suppressions: Suppressions;
const clock = Date.parse('2026-11-30T08:00:00Z');
const DAY = 86_400_000;

beforeEach(() => {
  redis = r.redis;
  keys = r.keys;
  store = createStore({ redis, keys, recordTtlSeconds: 60 });
  feedback = createFeedback({ redis, keys, softBounces: { count: 3, windowMs: 7 * DAY }, now: () => clock });
  suppressions = createSuppressions({ redis, keys });
});

async function accepted(to: string, tenantId = 'acme'): Promise<QueuedMessage> {
  const m = {
    ...parseMessage({ from: 'a@acme.test', to, subject: 's', text: 't', tenantId }),
    id: messageId(tenantId),
    acceptedAt: clock,
  };
  await store.accept(m);
  return m;
}

const event = (over: Partial<DeliveryEvent>): DeliveryEvent => ({
  provider: 'ses',
  kind: 'delivered',
  recipient: 'x@example.test',
  at: clock,
  reason: '',
  eventId: randomUUID(),
  ...over,
});

describe('feedback: events become suppression and history', () => {
  it('a hard bounce suppresses with source, provider, time and diagnostic, and the scheduler’s check sees it', async () => {
    const m = await accepted('Jane@Example.test');
    const result = await feedback.apply(
      event({
        kind: 'bounced_hard',
        recipient: 'jane@example.test',
        messageId: m.id,
        tenantId: 'acme',
        reason: 'smtp; 550 5.1.1 User unknown',
        enhanced: '5.1.1',
      }),
    );
    expect(result).toEqual({ outcome: 'suppressed', tenantId: 'acme' });
    expect(await suppressions.get('acme', 'JANE@example.test')).toEqual({
      address: 'jane@example.test',
      source: 'bounce',
      provider: 'ses',
      at: clock,
      reason: 'smtp; 550 5.1.1 User unknown',
    });
    expect(await store.peek(m.id, 'acme', m.to)).toMatchObject({ suppressed: 'bounce: smtp; 550 5.1.1 User unknown' });
    expect(await store.get(m.id)).toMatchObject({ lastEvent: 'bounced_hard', lastEventAt: clock, state: 'queued' });
    // Another tenant's list is its own.
    expect(await store.suppressed('other', m.to)).toBeNull();
  });

  it('an event applied twice changes nothing the second time, even after the address was lifted', async () => {
    const e = event({
      kind: 'complained',
      recipient: 'twice@example.test',
      tenantId: 'acme',
      reason: 'complaint: abuse',
    });
    expect(await feedback.apply(e)).toMatchObject({ outcome: 'suppressed' });
    expect(await suppressions.remove('acme', 'twice@example.test')).toBe(true);
    expect(await feedback.apply(e)).toMatchObject({ outcome: 'duplicate' });
    expect(await store.suppressed('acme', 'twice@example.test')).toBeNull();
  });

  it('complaints and unsubscribes suppress; blocks, drops, deferrals and deliveries do not', async () => {
    for (const [kind, suppresses] of [
      ['complained', true],
      ['unsubscribed', true],
      ['blocked', false],
      ['dropped', false],
      ['deferred', false],
      ['delivered', false],
    ] as const) {
      const recipient = `${kind}@example.test`;
      await feedback.apply(event({ kind, recipient, tenantId: 'acme', provider: 'sendgrid' }));
      expect(await store.suppressed('acme', recipient), kind).toEqual(
        suppresses ? expect.stringMatching(/^(complaint|unsubscribe): /) : null,
      );
    }
  });

  it('soft bounces suppress only at the configured count within the window', async () => {
    const recipient = 'full@example.test';
    const soft = (at: number) =>
      event({ kind: 'bounced_soft', recipient, tenantId: 'acme', at, reason: 'Transient/MailboxFull' });
    expect(await feedback.apply(soft(clock - 8 * DAY))).toMatchObject({ outcome: 'counted', softBounces: 0 });
    expect(await feedback.apply(soft(clock - 2 * DAY))).toMatchObject({ outcome: 'counted', softBounces: 1 });
    const retried = soft(clock - DAY);
    expect(await feedback.apply(retried)).toMatchObject({ outcome: 'counted', softBounces: 2 });
    // The ESP's retry of the same event is not a third bounce.
    expect(await feedback.apply(retried)).toMatchObject({ outcome: 'duplicate' });
    expect(await store.suppressed('acme', recipient)).toBeNull();
    expect(await feedback.apply(soft(clock))).toMatchObject({ outcome: 'suppressed', softBounces: 3 });
    expect(await suppressions.get('acme', recipient)).toMatchObject({
      source: 'soft-bounces',
      reason: '3 soft bounces, last: Transient/MailboxFull',
    });
    // Lifted, it starts from zero.
    await suppressions.remove('acme', recipient);
    expect(await feedback.apply(soft(clock))).toMatchObject({ outcome: 'counted', softBounces: 1 });
  });

  it('takes the tenant from the event, else from our message record, else default', async () => {
    const m = await accepted('rec@example.test', 'beta');
    expect(await feedback.apply(event({ kind: 'bounced_hard', recipient: m.to, messageId: m.id }))).toMatchObject({
      tenantId: 'beta',
    });
    expect(await store.suppressed('beta', m.to)).not.toBeNull();
    expect(await feedback.apply(event({ kind: 'bounced_hard', recipient: 'nobody@example.test' }))).toMatchObject({
      tenantId: 'default',
    });
    expect(await store.suppressed('default', 'nobody@example.test')).not.toBeNull();
  });

  it('keeps the latest event on the record, in short fields, whatever order they come in', async () => {
    const m = await accepted('order@example.test');
    await feedback.apply(event({ kind: 'delivered', recipient: m.to, messageId: m.id, at: clock + 5_000 }));
    await feedback.apply(event({ kind: 'deferred', recipient: m.to, messageId: m.id, at: clock + 1_000 }));
    expect(await store.get(m.id)).toMatchObject({ lastEvent: 'delivered', lastEventAt: clock + 5_000 });
    const fields = await redis.hgetall(keys.message(m.id));
    for (const v of Object.values(fields)) expect(v.length).toBeLessThan(64);
    // An event about a message we no longer have writes no stray record.
    await feedback.apply(event({ kind: 'delivered', messageId: 'mgone', tenantId: 'acme' }));
    expect(await redis.exists(keys.message('mgone'))).toBe(0);
  });
});

describe('suppression entries', () => {
  it('the worker’s own 550 5.1.1 is a `reply` entry with its provider, and reads back as before', async () => {
    const m = await accepted('B@example.test', 'default');
    await store.finalize(m.id, 'rejected', {
      suppress: true,
      to: m.to,
      tenantId: 'default',
      provider: 'mailgun',
      outcome: 'bad_recipient',
      reply: '550 5.1.1 no such user',
    });
    expect(await store.suppressed('default', 'b@EXAMPLE.test')).toBe('reply: bad_recipient: 550 5.1.1 no such user');
    expect(await suppressions.get('default', 'b@example.test')).toMatchObject({
      source: 'reply',
      provider: 'mailgun',
      reason: 'bad_recipient: 550 5.1.1 no such user',
    });
    expect((await redis.hget(keys.suppression('default'), 'b@example.test'))!.length).toBeLessThan(300);
  });

  it('reads an entry written before sources were kept', async () => {
    await redis.hset(keys.suppression('legacy'), 'old@example.test', 'bad_recipient: 550 5.1.1 gone');
    expect(await store.suppressed('legacy', 'old@example.test')).toBe('reply: bad_recipient: 550 5.1.1 gone');
    expect(await suppressions.get('legacy', 'old@example.test')).toMatchObject({
      source: 'reply',
      at: undefined,
      reason: 'bad_recipient: 550 5.1.1 gone',
    });
  });

  it('lists every entry of a tenant page by page, adds once and removes', async () => {
    for (let i = 0; i < 25; i++)
      await suppressions.add('paged', `u${i}@example.test`, {
        source: 'manual',
        provider: undefined,
        at: clock,
        reason: 'asked',
      });
    expect(
      await suppressions.add('paged', 'U1@example.test', {
        source: 'manual',
        provider: undefined,
        at: clock,
        reason: 'again',
      }),
    ).toBe(false);
    const seen = new Set<string>();
    let cursor = '0';
    do {
      const page = await suppressions.list('paged', { cursor, count: 10 });
      for (const e of page.entries) seen.add(e.address);
      cursor = page.cursor;
    } while (cursor !== '0');
    expect(seen.size).toBe(25);
    expect(await suppressions.get('paged', 'u1@example.test')).toMatchObject({ reason: 'asked', source: 'manual' });
    expect(await suppressions.remove('paged', 'u1@example.test')).toBe(true);
    expect(await suppressions.remove('paged', 'u1@example.test')).toBe(false);
    expect(await store.suppressed('paged', 'u1@example.test')).toBeNull();
  });
});
