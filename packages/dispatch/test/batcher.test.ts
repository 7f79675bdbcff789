import { describe, expect, it } from 'vitest';
import { BATCH_JOB, parseConfig, type DispatchBatchData, type DispatchJobData } from '@sluice/core';
import { createBatcher } from '@sluice/dispatch';
import { createFillingBatches, createQueues, injectedId } from '@sluice/store';
import { useRedisPrefix } from '../../../test/support/redis-prefix.js';

// The scheduler's batches, on real BullMQ queues: what goes in one dispatch job, and when.
const r = useRedisPrefix();

function admitted(position: number, extra: Partial<DispatchJobData> = {}): DispatchJobData {
  const now = Date.now();
  return {
    id: injectedId('spring', position),
    acceptedAt: now,
    from: { address: 'news@acme.test' },
    to: `u${position}@d.test`,
    priority: 'low',
    stream: 'marketing',
    tenantId: 'acme',
    campaignId: 'spring',
    provider: 'ses',
    receiver: 'd.test',
    admittedAt: now,
    ...extra,
  };
}

function setup(batches: Record<string, unknown> = {}) {
  const config = parseConfig({
    redis: { url: r.url, prefix: r.keys.prefix },
    providers: {
      ses: { kind: 'ses', sandbox: true, rate: 1000 },
      relay: { kind: 'smtp', sandbox: true, rate: 1000 },
      shared: { kind: 'smtp', sandbox: true, rate: 1000, recipientsPerTransaction: 20 },
    },
    defaultProvider: 'ses',
    batches,
  });
  const queues = createQueues({ redis: r.redis, keys: r.keys });
  const filling = createFillingBatches(r.redis, r.keys);
  const batcherOf = (holder: string, clock?: () => number) => createBatcher({ config, queues, filling, holder, clock });
  return { config, queues, filling, batcherOf, batcher: batcherOf('s1'), close: () => queues.close() };
}

async function jobs(queues: ReturnType<typeof createQueues>, priority: 'low' | 'critical' = 'low') {
  const queue = queues.dispatchAll(priority)[0]!;
  const list = [...(await queue.getWaiting()), ...(await queue.getDelayed())];
  return list.map((j) => ({
    name: j.name,
    ids: j.name === BATCH_JOB ? (j.data as DispatchBatchData).batch.map((m) => m.id) : [(j.data as DispatchJobData).id],
  }));
}

describe('the scheduler’s batches', () => {
  it('groups campaign mail of one window of slots in one job, written when full or due, each admission told after it', async () => {
    const { batcher, queues, close } = setup({ maxSize: 4, fillMs: 500 });
    const now = Date.now();
    const told: number[] = [];
    const adds = [0, 1, 2, 3, 4, 5].map((p) => batcher.add(admitted(p, { admittedAt: now })).then(() => told.push(p)));
    // Full at four: written at once; the other two wait for `fillMs`.
    await Promise.all(adds.slice(0, 4));
    expect(told.sort()).toEqual([0, 1, 2, 3]);
    expect(await jobs(queues)).toEqual([{ name: BATCH_JOB, ids: ['spring_0', 'spring_1', 'spring_2', 'spring_3'] }]);
    await Promise.all(adds);
    expect((await jobs(queues)).map((j) => j.ids)).toContainEqual(['spring_4', 'spring_5']);
    await close();
  });

  it('keeps slots of different windows, and different homes, apart; a batch of one goes as a plain job', async () => {
    const { batcher, queues, close } = setup({ spreadMs: 100, fillMs: 10 });
    const t = Math.ceil(Date.now() / 100) * 100 + 200;
    await Promise.all([
      batcher.add(admitted(0, { admittedAt: t })),
      batcher.add(admitted(1, { admittedAt: t + 150 })),
      batcher.add(admitted(2, { admittedAt: t + 20 })),
      // Position 64 is the next block: another message home.
      batcher.add(admitted(64, { admittedAt: t + 10 })),
    ]);
    // Booked ahead, they are written near their slots.
    await new Promise((resolve) => setTimeout(resolve, t + 200 - Date.now()));
    const written = (await jobs(queues)).sort((a, b) => b.ids.length - a.ids.length);
    expect(written).toEqual([
      { name: BATCH_JOB, ids: ['spring_0', 'spring_2'] },
      { name: 'send', ids: expect.any(Array) as unknown },
      { name: 'send', ids: expect.any(Array) as unknown },
    ]);
    await close();
  });

  it('writes a batch again as the same job only with the same recipients, so a re-run leaves none out', async () => {
    const { batcher, queues, close } = setup({ maxSize: 3 });
    const at = Date.now();
    await Promise.all([0, 1, 2].map((p) => batcher.add(admitted(p, { admittedAt: at }))));
    // Its scheduler died before the admissions completed: they run again, the same three (one
    // job, the second add ignored), and another time with a recipient in another's place.
    await Promise.all([0, 1, 2].map((p) => batcher.add(admitted(p, { admittedAt: at }))));
    await Promise.all([0, 1, 3].map((p) => batcher.add(admitted(p, { admittedAt: at }))));
    const written = (await jobs(queues)).map((j) => j.ids).sort();
    expect(written).toEqual([
      ['spring_0', 'spring_1', 'spring_2'],
      ['spring_0', 'spring_1', 'spring_3'],
    ]);
    await close();
  });

  it('takes only campaign mail of the normal and low classes, to a provider that batches, while enabled', async () => {
    const on = setup();
    expect(on.batcher.takes(admitted(0))).toBe(true);
    expect(on.batcher.takes(admitted(0, { priority: 'normal' }))).toBe(true);
    expect(on.batcher.takes(admitted(0, { priority: 'critical' }))).toBe(false);
    expect(on.batcher.takes(admitted(0, { priority: 'high' }))).toBe(false);
    expect(on.batcher.takes(admitted(0, { campaignId: undefined }))).toBe(false);
    expect(on.batcher.takes(admitted(0, { provider: 'relay' }))).toBe(false);
    await on.close();
    const off = setup({ enabled: false });
    expect(off.batcher.takes(admitted(0))).toBe(false);
    await off.close();
  });

  it('batches SMTP only where transactions carry several recipients, one receiving domain a batch', async () => {
    const { batcher, queues, close } = setup({ fillMs: 10 });
    expect(batcher.takes(admitted(0, { provider: 'shared' }))).toBe(true);
    const now = Date.now();
    const to = ['a@one.test', 'b@two.test', 'c@one.test', 'd@TWO.test'];
    await Promise.all(
      to.map((address, p) => batcher.add(admitted(p, { provider: 'shared', to: address, admittedAt: now }))),
    );
    const written = (await jobs(queues)).map((j) => j.ids).sort();
    expect(written).toEqual([
      ['spring_0', 'spring_2'],
      ['spring_1', 'spring_3'],
    ]);
    await close();
  });

  it('ends an admission whose batch is due later once its recipient is in Redis; the batch is written when due, its list dropped', async () => {
    const { batcher, queues, filling, close } = setup({ maxSize: 10, fillMs: 20 });
    // Booked 600 ms ahead: the batch is due 550 ms from now, far past `fillMs`.
    const slot = Date.now() + 600;
    const started = Date.now();
    await Promise.all([0, 1, 2].map((p) => batcher.add(admitted(p, { admittedAt: slot }))));
    expect(Date.now() - started).toBeLessThan(300);
    expect(await jobs(queues)).toEqual([]);
    const kept = await filling.all();
    expect(kept.map((b) => b.entries.map((e) => e.id))).toEqual([['spring_0', 'spring_1', 'spring_2']]);
    // Near its slot, the batch is written as one job and its list dropped.
    await new Promise((resolve) => setTimeout(resolve, 700));
    expect(await jobs(queues)).toEqual([{ name: BATCH_JOB, ids: ['spring_0', 'spring_1', 'spring_2'] }]);
    expect(await filling.all()).toEqual([]);
    await close();
  });

  it('writes a batch whose scheduler died once `worker.lockDurationMs` past due, as the job it would have been, and only once', async () => {
    const { batcherOf, queues, filling, config, close } = setup({ maxSize: 10, fillMs: 20 });
    const slot = Date.now() + 60_000;
    // A scheduler puts three recipients in a batch due in a minute, then dies (its timer never fires).
    const dead = batcherOf('dead');
    await Promise.all([0, 1, 2].map((p) => dead.add(admitted(p, { admittedAt: slot }))));
    expect(await filling.all()).toHaveLength(1);
    // Another scheduler's sweep leaves it while it is not long past due…
    let now = Date.now();
    const other = batcherOf('other', () => now);
    expect(await other.sweep()).toBe(0);
    expect(await jobs(queues)).toEqual([]);
    // …and writes it once it is.
    now = slot + config.worker.lockDurationMs + 1;
    expect(await other.sweep()).toBe(3);
    expect(await jobs(queues)).toEqual([{ name: BATCH_JOB, ids: ['spring_0', 'spring_1', 'spring_2'] }]);
    expect(await filling.all()).toEqual([]);
    expect(await other.sweep()).toBe(0);
    expect(await jobs(queues)).toHaveLength(1);
    await close();
  });
});
