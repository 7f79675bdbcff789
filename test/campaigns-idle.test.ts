import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { parseConfig, type SluiceConfig } from '@sluice/core';
import { createClient } from '@sluice/client';
import { createScheduler, type Scheduler } from '@sluice/dispatch';
import { createStatus, fleetMetrics } from '@sluice/ops';
import { createCampaigns, createQueues, createStore, type Campaigns } from '@sluice/store';
import { useRedisPrefix } from './support/redis-prefix.js';

// Campaigns that end (issue 29): the scheduler polls only campaigns with work, and archived
// campaigns leave every list. Counts of Redis commands, not wall-clock, with wide guard-rails;
// the figures themselves are `pnpm bench --only campaigns-idle`'s.
const r = useRedisPrefix();
const open: { close(): unknown }[] = [];
afterEach(async () => {
  for (const o of open.splice(0).reverse()) await o.close();
});

function configOf(): SluiceConfig {
  return parseConfig({
    redis: { url: r.url, prefix: r.prefix },
    providers: { ses: { kind: 'ses', sandbox: true, rate: 100, pool: 'default' } },
    defaultProvider: 'ses',
    organisations: { builtIn: false },
    reserves: { critical: 0 },
  });
}

async function start(): Promise<Scheduler> {
  const scheduler = createScheduler({ config: configOf(), logger: pino({ level: 'silent' }), providers: new Map() });
  await scheduler.start();
  open.push(scheduler);
  return scheduler;
}

function lifecycle(): Campaigns {
  const queues = createQueues({ redis: r.redis, keys: r.keys });
  open.push(queues);
  return createCampaigns({
    redis: r.redis,
    keys: r.keys,
    queues,
    store: createStore({ redis: r.redis, keys: r.keys }),
  });
}

/** Commands the server has run so far (`INFO commandstats`). */
async function commands(): Promise<number> {
  const info = await r.redis.info('commandstats');
  let calls = 0;
  for (const m of info.matchAll(/calls=(\d+)/g)) calls += Number(m[1]);
  return calls;
}

/** Commands the server ran in `ms` (the scheduler alone runs in this file's Redis). */
async function commandsOver(ms: number): Promise<number> {
  const before = await commands();
  await new Promise((resolve) => setTimeout(resolve, ms));
  return (await commands()) - before - 1;
}

async function until<T>(read: () => Promise<T>, ok: (v: T) => boolean, ms = 10_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await read();
    if (ok(v) || Date.now() > end) return v;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** `n` campaigns each of one message sent (its job admitted and gone), archived. */
async function archivedCampaigns(campaigns: Campaigns, n: number): Promise<void> {
  const store = createStore({ redis: r.redis, keys: r.keys });
  for (let i = 0; i < n; i++) {
    const id = `old-${i}`;
    await campaigns.create({ id });
    const m = { id: `${id}-m`, tenantId: 'default', campaignId: id, priority: 'low', acceptedAt: Date.now() };
    await store.accept({ ...m, from: { address: 'a@acme.test' }, to: [{ address: 'b@example.com' }] } as never);
    await store.finalize(m.id, 'sent', { campaignId: id, provider: 'ses' });
    await campaigns.archive(id, { actor: 'test' });
  }
}

describe('campaigns with work', () => {
  it('picks up a send into an idle campaign within about a second, and refuses one into an archived campaign', async () => {
    await start();
    const campaigns = lifecycle();
    await campaigns.create({ id: 'spring' });
    await campaigns.create({ id: 'over' });
    // Idle: the poll has passed it by a few times.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(await r.redis.zcard(r.keys.campaignsWithWork())).toBe(0);
    const client = createClient({ redis: r.url, prefix: r.prefix });
    open.push(client);
    const sentAt = Date.now();
    const { id } = await client.send({
      from: 'a@acme.test',
      to: 'b@example.com',
      subject: 's',
      text: 't',
      campaignId: 'spring',
    });
    // Admitted: its job moved to its class's dispatch queue (no worker runs here).
    const dispatchQueue = createQueues({ redis: r.redis, keys: r.keys });
    open.push(dispatchQueue);
    const inDispatch = async (): Promise<number> => {
      const c = await dispatchQueue.dispatch('low').getJobCounts('waiting', 'delayed', 'prioritized');
      return Object.values(c).reduce((a, b) => a + b, 0);
    };
    expect(await until(inDispatch, (n) => n === 1, 5_000)).toBe(1);
    expect((await client.messages.status(id))?.campaignId).toBe('spring');
    // About a second (one poll), with room for a busy machine.
    expect(Date.now() - sentAt).toBeLessThan(4_000);

    await campaigns.archive('over', { actor: 'test' });
    await expect(
      client.send({ from: 'a@acme.test', to: 'b@example.com', subject: 's', text: 't', campaignId: 'over' }),
    ).rejects.toMatchObject({ code: 'campaign_archived', path: 'campaignId' });
  });

  it('a poll costs the same with 1,000 archived or idle campaigns as with none, and /metrics and the status list none of the archived', async () => {
    await start();
    const campaigns = lifecycle();
    const status = createStatus({ config: configOf(), redis: r.redis, keys: r.keys });
    const series = async (): Promise<number> =>
      fleetMetrics(await status.snapshot()).reduce((n, f) => n + f.values.length, 0);
    await new Promise((resolve) => setTimeout(resolve, 500));
    const none = await commandsOver(3_000);
    const seriesNone = await series();

    await archivedCampaigns(campaigns, 1_000);
    for (let i = 0; i < 1_000; i++) await campaigns.create({ id: `idle-${i}` });
    await campaigns.create({ id: 'live' });
    // Archiving and creating marked nothing: no campaign has work.
    expect(await r.redis.zcard(r.keys.campaignsWithWork())).toBe(0);
    await new Promise((resolve) => setTimeout(resolve, 500));
    const many = await commandsOver(3_000);
    // Polling them one after another cost about five commands each a second (15,000 here).
    expect(many).toBeLessThan(none * 1.5 + 300);

    const snapshot = await status.snapshot();
    expect(snapshot.campaigns.filter((c) => c.id.startsWith('old-'))).toEqual([]);
    expect(await campaigns.archivedIds()).toHaveLength(1_000);
    for (const id of ['old-0', 'old-999']) expect(await r.redis.keys(`${r.prefix}:campaign-${id}:*`)).toEqual([]);
    // The archived add no series; the 1,001 active ones theirs (18 each at most).
    await Promise.all(Array.from({ length: 1_000 }, (_, i) => campaigns.delete(`idle-${i}`, { actor: 'test' })));
    const withArchived = await series();
    expect(withArchived - seriesNone).toBeLessThanOrEqual(18);
    expect(withArchived - seriesNone).toBeGreaterThan(0);
  }, 60_000);
});
