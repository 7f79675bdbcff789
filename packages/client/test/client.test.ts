import { Redis } from 'ioredis';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createKeys, type MessageInput } from '@sluice/core';
import { createClient, type SluiceClient } from '@sluice/client';
import { createCampaigns, createQueues } from '@sluice/store';
import { useRedisPrefix } from '../../../test/support/redis-prefix.js';

const r = useRedisPrefix();
let redis: Redis;
let client: SluiceClient;
let prefix: string;

const ok: MessageInput = { from: 'Acme <hello@acme.test>', to: 'someone@example.test', subject: 'Hi', text: 'Hello' };

async function jobsIn(name: string): Promise<number> {
  const queues = createQueues({ redis, keys: createKeys(prefix) });
  const counts = await queues.named(name).getJobCounts('waiting', 'delayed', 'active', 'prioritized');
  await queues.close();
  return Object.values(counts).reduce((a, b) => a + b, 0);
}
const records = async (): Promise<number> => (await redis.keys(`${prefix}:*:msg:*`)).length;

/** Every key of the test's prefix and its exact value (DUMP), to compare before and after a call. */
async function keyspace(): Promise<Map<string, string>> {
  const found = await redis.keys(`*${prefix}*`);
  const out = new Map<string, string>();
  for (const key of found.sort()) out.set(key, (await redis.dumpBuffer(key))?.toString('hex') ?? '');
  return out;
}

beforeEach(() => {
  redis = r.redis;
  prefix = r.prefix;
  client = createClient({ redis: r.url, prefix, fleetCheck: 'off' });
});
afterEach(async () => {
  await client.close();
});

describe('send() rejects bad input naming the field, and writes nothing', () => {
  const cases: [string, MessageInput, string, RegExp][] = [
    ['a bad address', { ...ok, to: 'not-an-address' }, 'to', /^invalid message: to: must be an email address/],
    [
      'CR/LF in a header',
      { ...ok, headers: { 'X-Campaign': 'a\r\nBcc: victim@example.test' } },
      'headers.X-Campaign',
      /must not contain CR or LF/,
    ],
    ['CR/LF in the subject', { ...ok, subject: 'Hi\nBcc: x@example.test' }, 'subject', /must not contain CR or LF/],
    [
      'an unknown priority',
      { ...ok, priority: 'urgent' as never },
      'priority',
      /must be one of critical, high, normal, low/,
    ],
    ['no body', { from: ok.from, to: ok.to, subject: 'Hi' }, 'text', /a message needs text or html/],
    ['a header Sluice sets', { ...ok, headers: { 'Message-ID': '<x@y>' } }, 'headers.Message-ID', /set by Sluice/],
    ['an unknown field', { ...ok, cc: 'x@example.test' } as never, 'cc', /cc: unknown key/],
    ['text and raw MIME together', { ...ok, raw: 'Subject: x\r\n\r\nhi' }, 'raw', /alternatives: give one/],
    [
      'raw MIME with headers beside it',
      { from: ok.from, to: ok.to, raw: 'Subject: x\r\n\r\nhi', headers: { 'X-A': '1' } },
      'headers',
      /goes in the raw MIME/,
    ],
    [
      'no subject without a template',
      { from: ok.from, to: ok.to, text: 'hi' },
      'subject',
      /required unless a template/,
    ],
  ];
  for (const [what, input, path, message] of cases) {
    it(what, async () => {
      const error = await client.send(input).catch((e: unknown) => e);
      expect(error).toMatchObject({ name: 'SluiceError', code: 'invalid_message', path });
      expect((error as Error).message).toMatch(message);
      expect(await jobsIn(createKeys(prefix).intakeQueue('normal'))).toBe(0);
      expect(await records()).toBe(0);
    });
  }

  it('an unknown campaign', async () => {
    const error = await client.send({ ...ok, campaignId: 'nope' }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'unknown_campaign', path: 'campaignId' });
    expect(await records()).toBe(0);
  });

  it('a bad message anywhere in a bulk: the error names its index, and none of the batch is enqueued', async () => {
    const batch = [ok, ok, ok, { ...ok, to: 'broken' }, ok];
    const error = await client.sendBulk(batch).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'invalid_message', path: 'messages.3.to' });
    expect(await jobsIn(createKeys(prefix).intakeQueue('normal'))).toBe(0);
    expect(await records()).toBe(0);
  });
});

describe('a refused call writes nothing: not a record, a job or a queue’s meta key', () => {
  const circular: Record<string, unknown> = {};
  circular.again = circular;
  const bad: [string, unknown, string, string][] = [
    ['a BigInt in template.data', { n: 10n }, 'messages.3.template.data.n', 'invalid_message'],
    ['a circular template.data', { c: circular }, 'messages.3.template.data.c.again', 'invalid_message'],
    [
      'a throwing toJSON',
      {
        t: {
          toJSON() {
            throw new Error('no');
          },
        },
      },
      'messages.3.template.data.t.toJSON',
      'invalid_message',
    ],
    ['10 MB of template.data', { blob: 'x'.repeat(10_000_000) }, 'messages.3.template.data', 'invalid_message'],
  ];
  for (const [what, data, path, code] of bad) {
    it(`sendBulk with ${what} in one item`, async () => {
      await client.send(ok); // the intake queue's meta exists: what follows must not change it either
      const before = await keyspace();
      const item = { from: ok.from, to: ok.to, template: { name: 'welcome', data } } as MessageInput;
      const batch = [ok, { ...ok, priority: 'high' as const }, { ...ok, priority: 'low' as const }, item, ok];
      const error = await client.sendBulk(batch).catch((e: unknown) => e);
      expect(error).toMatchObject({ name: 'SluiceError', code, path });
      expect(await keyspace()).toEqual(before);
      expect(await redis.exists(`${prefix}:${createKeys(prefix).intakeQueue('high')}:meta`)).toBe(0);
    });
  }

  it('send to a cancelled campaign: campaign_cancelled, nothing written; sendBulk names the item', async () => {
    const keys = createKeys(prefix);
    const queues = createQueues({ redis, keys });
    try {
      await client.campaigns.create({ id: 'recalled', priority: 'low' });
      await createCampaigns({ redis, keys, queues }).cancel('recalled', { actor: 'ops', reason: 'typo', waitMs: 0 });
      const before = await keyspace();
      const error = await client.send({ ...ok, campaignId: 'recalled' }).catch((e: unknown) => e);
      expect(error).toMatchObject({ name: 'SluiceError', code: 'campaign_cancelled', path: 'campaignId' });
      expect((error as Error).message).toMatch(/campaign recalled: it was cancelled, so it takes no more mail/);
      const bulk = await client.sendBulk([ok, { ...ok, campaignId: 'recalled' }]).catch((e: unknown) => e);
      expect(bulk).toMatchObject({ code: 'campaign_cancelled', path: 'messages.1.campaignId' });
      expect(await keyspace()).toEqual(before);
      expect(await client.campaigns.status('recalled')).toMatchObject({ cancelled: true, counts: { accepted: 0 } });
    } finally {
      await queues.close();
    }
  });
});

describe('a cancel that lands while a send is being written', () => {
  /** Waits until the connection named `name` has a command held by CLIENT PAUSE (flag `b`). */
  async function heldByPause(name: string): Promise<void> {
    for (let i = 0; i < 500; i++) {
      const list = (await redis.client('LIST')) as string;
      if (list.split('\n').some((line) => line.includes(` name=${name} `) && /\bflags=\w*b/.test(line))) return;
      await new Promise((res) => setTimeout(res, 10));
    }
    throw new Error(`${name} was never held by the pause`);
  }

  it('the send fails with campaign_cancelled and its message ends cancelled, not queued for ever', async () => {
    const keys = createKeys(prefix);
    const sender = new Redis(r.url, { connectionName: 'race-sender' });
    const ops = new Redis(r.url, { connectionName: 'race-ops' });
    const racing = createClient({ redis: sender, prefix, fleetCheck: 'off' });
    const queues = createQueues({ redis: ops, keys });
    try {
      await racing.campaigns.create({ id: 'spring', priority: 'low' });
      await racing.send({ ...ok, campaignId: 'spring' }); // its queue and meta exist
      // Writes wait, reads pass: the send reads the campaign (not cancelled) and waits to write;
      // the cancel's first write (the flags) waits behind it, and runs right after it.
      await redis.client('PAUSE', 10_000, 'WRITE');
      const sending = racing.send({ ...ok, campaignId: 'spring' }).catch((e: unknown) => e);
      await heldByPause('race-sender');
      const cancelling = createCampaigns({ redis: ops, keys, queues }).cancel('spring', {
        actor: 'ops',
        reason: 'recalled',
        waitMs: 0,
      });
      await heldByPause('race-ops');
      await redis.client('UNPAUSE');
      const error = await sending;
      await cancelling;
      expect(error).toMatchObject({ name: 'SluiceError', code: 'campaign_cancelled', path: 'campaignId' });
      expect((error as Error).message).toMatch(/recorded as cancelled and will not be sent/);
      const ids = (await redis.keys(`${prefix}:*:msg:*`)).map((k) => k.slice(k.indexOf(':msg:') + ':msg:'.length));
      expect(ids).toHaveLength(2);
      for (const id of ids) expect(await racing.messages.status(id)).toMatchObject({ state: 'cancelled' });
      expect(await jobsIn(keys.campaignQueue('spring'))).toBe(0);
    } finally {
      await redis.client('UNPAUSE');
      await racing.close();
      await queues.close();
      sender.disconnect();
      ops.disconnect();
    }
  });
});

describe('idempotency', () => {
  it('returns the first message’s id for a repeated key and enqueues nothing more', async () => {
    const queue = createKeys(prefix).intakeQueue('high');
    const first = await client.send({ ...ok, priority: 'high', idempotencyKey: 'order-42-receipt' });
    const again = await client.send({
      ...ok,
      priority: 'high',
      subject: 'changed',
      idempotencyKey: 'order-42-receipt',
    });
    expect(first.duplicate).toBe(false);
    expect(again).toEqual({ id: first.id, duplicate: true });
    expect(await jobsIn(queue)).toBe(1);
    // The same key from another tenant is another message.
    const other = await client.send({ ...ok, priority: 'high', tenantId: 'acme', idempotencyKey: 'order-42-receipt' });
    expect(other.id).not.toBe(first.id);
    expect(await jobsIn(queue)).toBe(2);
    // Within one bulk, too.
    const bulk = await client.sendBulk([
      { ...ok, priority: 'high', idempotencyKey: 'k1' },
      { ...ok, priority: 'high', idempotencyKey: 'k1' },
    ]);
    expect(bulk[1]).toEqual({ id: bulk[0]!.id, duplicate: true });
    expect(await jobsIn(queue)).toBe(3);
  });

  it('records what was accepted, to be looked up', async () => {
    const { id } = await client.send({ ...ok, priority: 'critical' });
    expect(await client.messages.status(id)).toMatchObject({
      id,
      state: 'queued',
      priority: 'critical',
      to: ok.to,
      attempts: 0,
    });
    expect(await client.messages.status('m-unknown')).toBeNull();
    expect(await client.messages.cancel(id)).toBe(true);
    expect(await client.messages.cancel(id)).toBe(false);
    expect(await client.messages.status(id)).toMatchObject({ state: 'cancelled' });
  });
});

describe('campaigns', () => {
  it('creates, refuses a second with the same id, and gives campaign mail the campaign’s class', async () => {
    await client.campaigns.create({ id: 'spring', priority: 'low', rate: 10 });
    await expect(client.campaigns.create({ id: 'spring' })).rejects.toMatchObject({
      code: 'campaign_exists',
      path: 'id',
    });
    await expect(client.campaigns.create({ id: 'bad id' })).rejects.toMatchObject({
      code: 'invalid_argument',
      path: 'id',
    });
    const { id } = await client.send({ ...ok, campaignId: 'spring' });
    expect(await client.messages.status(id)).toMatchObject({
      priority: 'low',
      campaignId: 'spring',
      queue: '{campaign-spring}',
    });
    const status = await client.campaigns.status('spring');
    expect(status).toMatchObject({
      id: 'spring',
      paused: false,
      rate: 10,
      pending: 1,
      counts: { accepted: 1, sent: 0 },
    });
    await client.campaigns.pause('spring');
    expect((await client.campaigns.status('spring')).paused).toBe(true);
    await client.campaigns.resume('spring');
    expect((await client.campaigns.status('spring')).paused).toBe(false);
    await expect(client.campaigns.pause('nope')).rejects.toMatchObject({ code: 'unknown_campaign' });
  });

  it('refuses to resume a cancelled campaign: campaign_cancelled, and its queue and flag stay paused', async () => {
    const keys = createKeys(prefix);
    const queues = createQueues({ redis, keys });
    try {
      await client.campaigns.create({ id: 'recalled', priority: 'low' });
      await client.send({ ...ok, campaignId: 'recalled' });
      await createCampaigns({ redis, keys, queues }).cancel('recalled', {
        actor: 'ops',
        reason: 'wrong price',
        waitMs: 0,
      });
      const error = await client.campaigns.resume('recalled').catch((e: unknown) => e);
      expect(error).toMatchObject({ name: 'SluiceError', code: 'campaign_cancelled', path: 'campaignId' });
      expect((error as Error).message).toBe(
        'campaign recalled was cancelled: it cannot be resumed (cancelling cannot be undone)',
      );
      expect(await client.campaigns.status('recalled')).toMatchObject({ paused: true, cancelled: true });
      expect(await queues.campaign('recalled').isPaused()).toBe(true);
      expect(await redis.hget(keys.campaign('recalled'), 'paused')).toBe('1');
    } finally {
      await queues.close();
    }
  });
});
