import type { Redis } from 'ioredis';
import { Queue } from 'bullmq';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { HOME_COUNT, PRIORITY_CLASSES, QUEUE_OPTIONS, homeOf, type Keys } from '@sluice/core';
import { createCampaigns, createHeartbeat, createOutcomes, createQueues, createStore } from '@sluice/store';
import { createSignals } from '@sluice/throttle';
import { useRedisPrefix } from '../../../test/support/redis-prefix.js';
import { MigrationRefusedError, migrateKeyLayout, type MigrationReport } from '../src/migrate-layout.js';

const r = useRedisPrefix();
let redis: Redis;
let keys: Keys;
let P: string;
const opened: { close(): Promise<void> }[] = [];

beforeEach(() => {
  redis = r.redis;
  keys = r.keys;
  P = r.prefix;
});

afterEach(async () => {
  for (const q of opened.splice(0).reverse()) await q.close();
});

function queue(name: string): Queue {
  const q = new Queue(name, { ...QUEUE_OPTIONS, connection: redis, prefix: P });
  opened.push(q);
  return q;
}

const NOW = Date.now();
/** The signals' bucket the fixture counts in (a whole second, a minute ago). */
const SECOND = Math.floor(NOW / 1000) * 1000 - 60_000;
/** Positions of `spring` whose records are gone, in blocks 0, 1, 17 (block 1's home again) and 40. */
const GONE = [3, 64 + 9, 17 * 64 + 1, 40 * 64 + 63];
const TX = 'm0a1b2c3d4e5f60718';
const LAUNCH = { request: { at: NOW - 7_200_000, by: 'ops' }, decision: { verdict: 'approved' } };
const CONTENT = { from: { address: 'news@example.com' }, subject: 'Spring', text: 'Hello' };
const COUNTS = { accepted: 130, sent: 100, rejected: 3, suppressed: 2, expired: 1, cancelled: 4, unconfirmed: 0 };
const counters = (c: Record<string, number>): Record<string, number> =>
  Object.fromEntries(Object.entries(c).map(([k, v]) => [`n:${k}`, v]));

/** The old layout (before 9ab798a), written by hand as its fleet wrote it. */
async function writeOldLayout(): Promise<{ entries: string[] }> {
  const record = { state: 'sent', priority: 'high', to: 'ann@example.com', tenantId: 'acme', campaignId: '' };
  await redis.hset(`${P}:msg:${TX}`, { ...record, attempts: 2, createdAt: NOW - 5000, updatedAt: NOW - 1000 });
  await redis.hset(`${P}:msg:${TX}`, { finalAt: NOW - 1000, provider: 'ses', providerMessageId: 'ses-1' });
  await redis.expire(`${P}:msg:${TX}`, 86_400);
  const attempt = {
    at: NOW - 3000,
    provider: 'ses',
    outcome: 'deferred',
    reply: '421 try later',
    family: 'greylisted',
  };
  await redis.rpush(`${P}:attempts:${TX}`, JSON.stringify(attempt));
  // The campaign: paused, with counters, content, cursor and a launch.
  await redis.hset(`${P}:campaign:spring`, { name: 'Spring sale', tenantId: 'acme', priority: 'low' });
  await redis.hset(`${P}:campaign:spring`, { createdAt: NOW - 86_400_000, paused: '1', ...counters(COUNTS) });
  await redis.set(`${P}:campaign:spring:content`, JSON.stringify(CONTENT));
  await redis.set(`${P}:campaign:spring:cursor`, '130|line-130');
  await redis.hset(`${P}:launch:spring`, { v: 3, record: JSON.stringify(LAUNCH), summary: '{}' });
  await redis.sadd(`${P}:campaigns`, 'spring');
  await redis.zadd(`${P}:campaigns:work`, 7, 'spring');
  await redis.sadd(`${P}:launches`, 'spring');
  // An archived campaign: its hash keeps its counters and expires.
  await redis.hset(`${P}:campaign:autumn`, { name: 'Autumn', tenantId: 'acme', createdAt: NOW - 9e8 });
  await redis.hset(`${P}:campaign:autumn`, { archivedAt: NOW - 8e8, archivedBy: 'sluice', 'n:accepted': 5 });
  await redis.hset(`${P}:campaign:autumn`, { 'n:sent': 5 });
  await redis.pexpire(`${P}:campaign:autumn`, 86_400_000);
  await redis.zadd(`${P}:campaigns:archived`, NOW - 8e8, 'autumn');
  // An injected record (block 0), a compact block (position 70: block 1, slot 6), a gone bitmap.
  await redis.hset(`${P}:msg:spring_5`, { ...record, to: 'eve@example.com', campaignId: 'spring', state: 'queued' });
  await redis.hset(`${P}:mc:spring:1`, { '12': `s${(NOW - 2000).toString(36)}|ses`, '13': 'ses-70' });
  for (const pos of GONE) await redis.setbit(`${P}:mgone:spring`, pos, 1);
  await redis.pexpire(`${P}:mgone:spring`, 3_600_000);
  // Feedback: a suppression, soft bounces, a full mailbox, an ESP event mark.
  await redis.hset(`${P}:sup:acme`, 'bob@example.com', `bounce|${NOW - 9000}|ses|550 no such user`);
  await redis.zadd(`${P}:soft:acme:carl@example.com`, NOW - 8000, 'evt-2');
  await redis.zadd(`${P}:mbfull:acme:dan@example.com`, NOW - 7000, 'spring_9');
  await redis.set(`${P}:evt:ses:evt-2`, '1', 'EX', 86_400);
  // Signals: a provider's bucket, a name holding `:`, the index, an ESP event counted.
  await redis.hset(`${P}:sig:provider:ses:${SECOND}`, { attempted: 5, accepted: 4 });
  await redis.hset(`${P}:sig:circuit:google:ses:${SECOND}`, { listed: 1 });
  await redis.zadd(`${P}:sigidx:provider`, NOW, 'ses');
  await redis.set(`${P}:evtsig:ses:evt:with:colons`, '1', 'EX', 86_400);
  // The outcome stream, a backend's group, and one event read and not acknowledged.
  const entries: string[] = [];
  for (const [id, state] of [
    [TX, 'sent'],
    ['spring_70', 'sent'],
  ] as const) {
    const fields = ['id', id, 'state', state, 'campaign', '', 'tenant', 'acme', 'key', '', 'providerMessageId', 'p'];
    entries.push((await redis.xadd(`${P}:outcomes`, '*', ...fields, 'family', 'accepted', 'at', NOW))!);
  }
  await redis.xgroup('CREATE', `${P}:outcomes`, 'backend', '0');
  await redis.xreadgroup('GROUP', 'backend', 'c1', 'COUNT', 1, 'STREAMS', `${P}:outcomes`, '>');
  // Queues under their old names: the paused campaign's (one waiting, one delayed), intake, dispatch.
  const spring = queue('campaign-spring');
  await spring.add('send', { id: 'spring_10', to: 'fay@example.com' }, { jobId: 'spring_10' });
  await spring.add('send', { id: 'spring_11' }, { jobId: 'spring_11', delay: 3_600_000 });
  await spring.pause();
  await queue('intake-normal').add('send', { id: 'm1' }, { jobId: 'm1' });
  await queue('dispatch-low').add('send', { id: 'm2', provider: 'ses' }, { jobId: 'm2' });
  // Keys the new layout keeps as they are.
  await redis.set(`{${P}:rl}:p:ses`, 'bucket');
  await redis.set(`${P}:gov:leader`, 'someone');
  return { entries };
}

/** The old layout's names: none may be left after the migration. */
const OLD_PATTERNS = [
  'msg:*',
  'attempts:*',
  'mc:*',
  'mgone:*',
  'campaign:*',
  'launch:*',
  'campaigns',
  'campaigns:*',
  'launches',
  'sup:[^{]*',
  'soft:[^{]*',
  'mbfull:[^{]*',
  'evt:[^{]*',
  'sig:*',
  'sigidx:*',
  'evtsig:*',
  'outcomes',
  'intake-*',
  'dispatch-*:*',
  'campaign-*',
];

async function scanAll(pattern: string): Promise<string[]> {
  const out: string[] = [];
  let cursor = '0';
  do {
    const [next, found] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
    cursor = next;
    out.push(...found);
  } while (cursor !== '0');
  return out.sort();
}

async function oldKeysLeft(): Promise<string[]> {
  const found = await Promise.all(OLD_PATTERNS.map((p) => scanAll(`${P}:${p}`)));
  // `dispatch-*:*` matches the new dispatch queues' keys too (`dispatch-low-{b32.76}:…`).
  return found.flat().filter((k) => !/^[^:]+:dispatch-[a-z]+-\{/.test(k));
}

/** Every key of the test's prefix with its value as DUMP gives it: equal when nothing changed. */
async function snapshot(): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const key of await scanAll(`*${P}*`)) out.set(key, (await redis.dumpBuffer(key))?.toString('hex') ?? '');
  return out;
}

const migrate = (options: { dryRun?: boolean; now?: () => number } = {}): Promise<MigrationReport> =>
  migrateKeyLayout({ redis, prefix: P, ...options });

describe('migrateKeyLayout', () => {
  it('moves every key where the new code reads it, and a second run moves nothing', async () => {
    const { entries } = await writeOldLayout();
    const lines: string[] = [];
    const report = await migrateKeyLayout({ redis, prefix: P, log: (l) => lines.push(l) });
    expect(report.left).toEqual([]);
    expect(report.moved).toMatchObject({ records: 2, attempts: 1, compactBlocks: 1, goneBitmaps: 1, campaigns: 2 });
    expect(report.moved).toMatchObject({ campaignKeys: 2, launches: 1, campaignSets: 4, suppressions: 1 });
    expect(report.moved).toMatchObject({ softBounces: 1, mailboxFull: 1, signals: 2, signalIndexes: 1 });
    expect(report.moved).toMatchObject({ eventSignals: 1, outcomes: 1 });
    expect(report.queues).toEqual(['campaign-spring', 'dispatch-low', 'intake-normal']);
    expect(report.dropped).toBe(1);
    expect(lines.join('\n')).toContain('ESP event marks: 1 dropped');
    expect(await oldKeysLeft()).toEqual([]);
    expect(await redis.get(`${P}:layout`)).toBe('2');

    const store = createStore({ redis, keys });
    expect(await store.get(TX)).toMatchObject({ state: 'sent', to: 'ann@example.com', providerMessageId: 'ses-1' });
    expect(await redis.ttl(keys.message(TX))).toBeGreaterThan(86_000);
    expect((await store.attempts(TX)).map((a) => a.reply)).toEqual(['421 try later']);
    expect(await store.get('spring_5')).toMatchObject({ state: 'queued', campaignId: 'spring' });
    expect(await store.get('spring_70')).toMatchObject({ state: 'sent', providerMessageId: 'ses-70' });
    for (const pos of GONE) expect((await store.peek(`spring_${pos}`, 'acme', 'x@example.com')).state).toBe('final');
    expect((await store.peek('spring_4', 'acme', 'x@example.com')).state).toBeNull();
    for (const pos of GONE)
      expect(await redis.pttl(keys.goneRecords('spring', homeOf(`spring_${pos}`)))).toBeGreaterThan(0);
    expect(await store.suppressed('acme', 'bob@example.com')).toBe('bounce: 550 no such user');
    expect(await store.look('spring_5', 'spring')).toEqual({ state: 'queued', paused: true });

    const queues = createQueues({ redis, keys });
    opened.push(queues);
    const campaigns = createCampaigns({ redis, keys, queues, store });
    const spring = await campaigns.status('spring');
    expect(spring).toMatchObject({ name: 'Spring sale', tenantId: 'acme', paused: true, counts: COUNTS });
    expect(spring).toMatchObject({ cursor: { position: 130, value: 'line-130' }, launch: LAUNCH });
    expect(spring.queue).toEqual({ waiting: 1, delayed: 1, active: 0 });
    expect(await campaigns.content('spring')).toEqual(CONTENT);
    expect(await campaigns.ids()).toEqual(['spring']);
    expect(await campaigns.archivedIds()).toEqual(['autumn']);
    expect((await campaigns.status('autumn')).counts).toMatchObject({ accepted: 5, sent: 5 });
    expect(await redis.pttl(keys.campaignHome('autumn', 0))).toBeGreaterThan(86_000_000);
    // The pause flag's copy in every home: what a worker's submit reads.
    for (let h = 0; h < HOME_COUNT; h++) expect(await redis.hget(keys.campaignHome('spring', h), 'paused')).toBe('1');
    expect(await redis.zscore(keys.campaignsWithWork(), 'spring')).toBe('7');
    expect(await redis.sismember(keys.launches(), 'spring')).toBe(1);

    const jobs = queue(keys.campaignQueue('spring'));
    expect((await jobs.getJob('spring_10'))?.data).toEqual({ id: 'spring_10', to: 'fay@example.com' });
    expect(await (await jobs.getJob('spring_11'))?.getState()).toBe('delayed');
    expect(await jobs.isPaused()).toBe(true);
    expect((await queue(keys.intakeQueue('normal')).getJob('m1'))?.data).toEqual({ id: 'm1' });
    expect(await queue(keys.dispatchQueue('low', 0)).getJobCounts('waiting')).toEqual({ waiting: 1 });
    for (const c of PRIORITY_CLASSES.filter((c) => c !== 'normal'))
      expect(await queue(keys.intakeQueue(c)).count()).toBe(0);

    const signals = createSignals({ redis, keys, flushMs: 60_000, clock: () => NOW });
    opened.push(signals);
    expect(await signals.sum({ kind: 'provider', name: 'ses' }, SECOND, SECOND + 1000)).toEqual({
      attempted: 5,
      accepted: 4,
    });
    expect(await signals.sum({ kind: 'circuit', name: 'google:ses' }, SECOND, SECOND + 1000)).toEqual({ listed: 1 });
    expect(await signals.active('provider')).toEqual(['ses']);
    expect(await redis.exists(keys.feedbackSignal('ses', 'evt:with:colons'))).toBe(1);
    expect(await redis.zrange(keys.softBounces('acme', 'carl@example.com'), '0', '-1')).toEqual(['evt-2']);
    expect(await redis.zrange(keys.mailboxFull('acme', 'dan@example.com'), '0', '-1')).toEqual(['spring_9']);
    expect(await redis.get(`{${P}:rl}:p:ses`)).toBe('bucket');
    expect(await redis.get(`${P}:gov:leader`)).toBe('someone');

    // The backend's group: its pending event first, then the next; ids name home 0.
    const outcomes = createOutcomes({ redis, keys });
    const pending = await outcomes.read('backend', 'c1');
    expect(pending.map((e) => [e.id, e.messageId])).toEqual([[`0-${entries[0]}`, TX]]);
    expect(await outcomes.ack('backend', [pending[0]!.id])).toBe(1);
    expect((await outcomes.read('backend', 'c1')).map((e) => e.id)).toEqual([`0-${entries[1]}`]);

    const before = await snapshot();
    const again = await migrate();
    expect(again).toMatchObject({ total: 0, dropped: 0, left: [], queues: [], layoutBefore: '2' });
    expect(await snapshot()).toEqual(before);
  });

  it('finishes a run cut off halfway: nothing doubled, nothing left', async () => {
    await writeOldLayout();
    const crash = (line: string): void => {
      if (line.startsWith('campaigns:')) throw new Error('cut off');
    };
    await expect(migrateKeyLayout({ redis, prefix: P, log: crash })).rejects.toThrow('cut off');
    expect(await redis.get(`${P}:layout`)).toBeNull();
    const rest = await migrate();
    expect(rest.moved).toMatchObject({
      records: 0,
      campaigns: 0,
      launches: 1,
      queueKeys: expect.any(Number) as unknown,
    });
    expect(await oldKeysLeft()).toEqual([]);
    const queues = createQueues({ redis, keys });
    opened.push(queues);
    const campaigns = createCampaigns({ redis, keys, queues });
    expect((await campaigns.status('spring')).counts).toEqual(COUNTS);
    expect(await redis.get(`${P}:layout`)).toBe('2');
  });

  it('counts in a dry run and writes nothing', async () => {
    await writeOldLayout();
    const before = await snapshot();
    const dry = await migrate({ dryRun: true });
    expect(await snapshot()).toEqual(before);
    const done = await migrate();
    expect({ ...dry, dryRun: false, queues: [] }).toEqual({ ...done, queues: [] });
    expect(dry.total).toBeGreaterThan(20);
  });

  it('refuses while a process of the fleet beat within 30 s, writing nothing', async () => {
    await writeOldLayout();
    const beat = createHeartbeat({ redis, keys, role: 'worker', intervalMs: 600_000 });
    await beat.start();
    try {
      const before = await snapshot();
      await expect(migrate()).rejects.toMatchObject({ reason: 'fleet_running' });
      // Its last beat 20 s ago: past ALIVE_MS, still refused (it may be stalled, not gone).
      await expect(migrate({ now: () => Date.now() + 20_000 })).rejects.toBeInstanceOf(MigrationRefusedError);
      expect(await snapshot()).toEqual(before);
      expect((await migrate({ dryRun: true, now: () => Date.now() + 31_000 })).total).toBeGreaterThan(0);
    } finally {
      await beat.close();
    }
  });

  it('refuses while a job is active in an old queue, or a job is a flow’s child, writing nothing', async () => {
    await writeOldLayout();
    await redis.set(`${P}:campaign-spring:spring_10:lock`, 'worker-token', 'PX', 30_000);
    const before = await snapshot();
    await expect(migrate()).rejects.toMatchObject({
      reason: 'job_active',
      message: expect.stringContaining('job spring_10 of queue campaign-spring is active') as unknown,
    });
    expect(await snapshot()).toEqual(before);
    await redis.del(`${P}:campaign-spring:spring_10:lock`);
    await redis.hset(`${P}:intake-normal:m1`, 'parentKey', `${P}:intake-normal:parent`);
    const flows = await snapshot();
    await expect(migrate()).rejects.toMatchObject({ reason: 'flows' });
    expect(await snapshot()).toEqual(flows);
  });
});
