import { afterEach, describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { parseConfig, type SluiceConfig } from '@sluice/core';
import {
  createLaunchChore,
  createOrganisations,
  createScheduler,
  createWarmup,
  type Scheduler,
} from '@sluice/dispatch';
import { createCampaigns, createQueues, type Campaigns, type LaunchRecord, type Queues } from '@sluice/store';
import { createAdjustments, createSignals } from '@sluice/throttle';
import { useRedisPrefix } from '../../../test/support/redis-prefix.js';

// The admission decision at launch, decided by a real scheduler's governor leader.
const r = useRedisPrefix();
const open: { close(): unknown }[] = [];
afterEach(async () => {
  for (const o of open.splice(0).reverse()) await o.close();
});

const HOUR = 3_600_000;
/** 100,000 recipients: 70,000 at gmail (no limit of its own), 30,000 at yahoo (10/s: 3,000 s). */
const FORECAST = { total: 100_000, domains: { 'gmail.com': 70_000, 'yahoo.com': 30_000 } };

function configOf(over: Record<string, unknown> = {}): SluiceConfig {
  return parseConfig({
    redis: { url: r.url, prefix: r.prefix },
    providers: { ses: { kind: 'ses', sandbox: true, rate: 100, pool: 'default' } },
    defaultProvider: 'ses',
    receivers: [{ name: 'yahoo', domains: ['yahoo.com'], rate: 10 }],
    organisations: { builtIn: false },
    reserves: { critical: 0 },
    governor: { intervalMs: 100 },
    ...over,
  });
}

async function start(config: SluiceConfig): Promise<Scheduler> {
  const scheduler = createScheduler({ config, logger: pino({ level: 'silent' }), providers: new Map() });
  await scheduler.start();
  open.push(scheduler);
  return scheduler;
}

function lifecycle(): Campaigns {
  const queues: Queues = createQueues({ redis: r.redis, keys: r.keys });
  open.push(queues);
  return createCampaigns({ redis: r.redis, keys: r.keys, queues });
}

async function until<T>(read: () => Promise<T>, ok: (v: T) => boolean, ms = 10_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await read();
    if (ok(v) || Date.now() > end) return v;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('a campaign launch', () => {
  it('is accepted by the scheduler when every receiver finishes in time, and the gate opens', async () => {
    await start(configOf());
    const campaigns = lifecycle();
    await campaigns.create({ id: 'spring', priority: 'low' });
    expect(await campaigns.gate('spring')).toMatchObject({ state: 'refused', code: 'campaign_not_launched' });
    const record = await campaigns.launch('spring', FORECAST, { actor: 'ana' });
    expect(record.decision).toMatchObject({ kind: 'accept', rule: 'fits', approval: 'not-needed' });
    expect(record.decision!.decidedBy).toMatch(/-/);
    const yahoo = record.decision!.receivers.find((x) => x.receiver === 'yahoo')!;
    expect(yahoo).toMatchObject({ count: 30_000, rate: 10, binds: { limit: 'receiver', key: 'yahoo' }, late: false });
    expect(record.decision!.receivers.find((x) => x.receiver === 'gmail.com')!.binds).toMatchObject({
      limit: 'provider',
      key: 'ses',
    });
    expect(await campaigns.gate('spring')).toEqual({ state: 'open', stopped: {} });
    expect((await campaigns.status('spring')).launch).toMatchObject({
      requestedBy: 'ana',
      decision: { kind: 'accept' },
    });
    await expect(campaigns.launch('spring', FORECAST)).rejects.toMatchObject({ code: 'campaign_launched' });
  });

  it('is split into waves past the class lifetime, waits for an approval, which is audited', async () => {
    // 3,000 s at yahoo against a 20-minute lifetime: 3 waves.
    await start(configOf({ delivery: { lifetimeMs: { critical: HOUR, high: HOUR, normal: HOUR, low: 20 * 60_000 } } }));
    const campaigns = lifecycle();
    await campaigns.create({ id: 'big' });
    const record = await campaigns.launch('big', FORECAST, { actor: 'ana' });
    expect(record.decision).toMatchObject({ kind: 'split', rule: 'past-expiry', approval: 'required' });
    expect(record.decision!.waves!.map((w) => w.count)).toEqual([33_334, 33_333, 33_333]);
    expect(record.decision!.reason).toContain("yahoo's last of 30000 recipients");
    const waiting = await campaigns.gate('big');
    expect(waiting).toMatchObject({ state: 'wait' });
    expect(waiting.state === 'wait' && waiting.reason).toContain('awaiting an operator');

    await expect(campaigns.approve('big', { actor: 'ana', reason: '' })).rejects.toMatchObject({
      code: 'invalid_argument',
      path: 'reason',
    });
    const approved = await campaigns.approve('big', { actor: 'bo', reason: 'three waves are fine' });
    expect(approved.decision).toMatchObject({
      approval: 'approved',
      approvedBy: 'bo',
      approvalReason: 'three waves are fine',
    });
    const gate = await campaigns.gate('big');
    expect(gate).toMatchObject({ state: 'open', maxPosition: 33_334, stopped: {} });
    expect(gate.state === 'open' && gate.nextAtMs).toBe(approved.decision!.waves![1]!.atMs);
    const [entry] = (await r.redis.xrevrange(r.keys.audit(), '+', '-', 'COUNT', 1)) as [string, string[]][];
    const fields = entry![1];
    expect(fields).toEqual(
      expect.arrayContaining(['action', 'approve', 'name', 'big', 'kind', 'launch-split', 'actor', 'bo']),
    );
    await expect(campaigns.approve('big', { actor: 'bo', reason: 'again' })).rejects.toMatchObject({
      code: 'approval_refused',
    });
  });

  it('is rejected past the lifetime when so configured, and a storage-critical reject is never approved', async () => {
    await start(
      configOf({
        delivery: { lifetimeMs: { critical: HOUR, high: HOUR, normal: HOUR, low: 20 * 60_000 } },
        launch: { onPastExpiry: 'reject' },
      }),
    );
    const campaigns = lifecycle();
    await campaigns.create({ id: 'late' });
    const late = await campaigns.launch('late', FORECAST);
    expect(late.decision).toMatchObject({ kind: 'reject', rule: 'past-expiry' });
    expect(await campaigns.gate('late')).toMatchObject({ state: 'refused', code: 'campaign_rejected' });
    await expect(campaigns.approve('late', { actor: 'bo', reason: 'please' })).rejects.toMatchObject({
      code: 'approval_refused',
    });
  });

  it('is rejected for storage and that reject is refused approval', async () => {
    // A budget far below what even an idle Redis uses: storage is critical.
    await start(configOf({ launch: { storage: { budgetBytes: 1000 } } }));
    const campaigns = lifecycle();
    await campaigns.create({ id: 'full' });
    const record = await campaigns.launch('full', FORECAST);
    expect(record.decision).toMatchObject({ kind: 'reject', rule: 'storage-critical' });
    expect(record.decision!.checks.storage).toMatchObject({ budgetBytes: 1000, source: 'budget' });
    await expect(campaigns.approve('full', { actor: 'bo', reason: 'I know' })).rejects.toThrow(
      /storage-critical reject is never approved/,
    );
  });

  it('is held while a severe circuit covers a material share, until it closes', async () => {
    const config = configOf();
    const adjustments = createAdjustments({ redis: r.redis, keys: r.keys, backpressure: config.backpressure });
    open.push({ close: () => adjustments.close() });
    // Open for 3 s: long enough to be decided on while open, short enough to see it end.
    const untilMs = Date.now() + 3_000;
    await adjustments.setCircuit('yahoo|default|transactional', {
      untilMs,
      openForMs: 3_000,
      probes: 1,
      rule: 'blocks',
    });
    await start(config);
    const campaigns = lifecycle();
    await campaigns.create({ id: 'held' });
    const record = await campaigns.launch('held', FORECAST);
    expect(record.decision).toMatchObject({ kind: 'held', rule: 'circuit', untilMs });
    expect(record.decision!.checks.circuits).toEqual({ share: 0.3, receivers: ['yahoo'] });
    expect(await campaigns.gate('held')).toMatchObject({ state: 'wait', untilMs });
    // Once the circuit's time is up, the leader decides again: accepted, and the gate opens.
    const later = await until(
      () => campaigns.status('held'),
      (s) => s.launch?.decision?.kind !== 'held',
    );
    expect(later.launch?.decision).toMatchObject({ kind: 'accept', checks: { circuits: { share: 0 } } });
    expect(later.launch!.decision!.decidedAt).toBeGreaterThanOrEqual(untilMs);
    expect(await campaigns.gate('held')).toEqual({ state: 'open', stopped: {} });
  });

  it('stays stored when no scheduler runs, and is decided once one does', async () => {
    const campaigns = lifecycle();
    await campaigns.create({ id: 'early' });
    await expect(campaigns.launch('early', FORECAST, { timeoutMs: 300 })).rejects.toMatchObject({
      code: 'no_scheduler',
    });
    expect(await campaigns.gate('early')).toMatchObject({ state: 'wait' });
    await start(configOf());
    const status = await until(
      () => campaigns.status('early'),
      (s) => s.launch?.decision !== undefined,
    );
    expect(status.launch?.decision?.kind).toBe('accept');
    expect(status.launch?.stream).toBe('transactional');
  });

  it("projects the stream of the campaign's content, unless the launch names one", async () => {
    const campaigns = lifecycle();
    const content = { from: 'news@acme.test', subject: 'Hi', text: 'Hello', stream: 'newsletter' };
    await campaigns.create({ id: 'news', content });
    await campaigns.create({ id: 'other', content });
    await expect(campaigns.launch('news', FORECAST, { timeoutMs: 0 })).rejects.toMatchObject({ code: 'no_scheduler' });
    await expect(campaigns.launch('other', FORECAST, { timeoutMs: 0, stream: 'bulk' })).rejects.toMatchObject({
      code: 'no_scheduler',
    });
    expect((await campaigns.status('news')).launch?.stream).toBe('newsletter');
    expect((await campaigns.status('other')).launch?.stream).toBe('bulk');
  });

  it('refuses a bad forecast naming the field, writing nothing, and scales a sample', async () => {
    const campaigns = lifecycle();
    await campaigns.create({ id: 'typo' });
    await expect(campaigns.launch('typo', { total: 10, domains: { 'gmail.com': 3 } })).rejects.toMatchObject({
      code: 'invalid_argument',
      path: 'forecast.domains',
    });
    await expect(campaigns.launch('typo', { total: 10, domains: { 'not a domain': 10 } })).rejects.toMatchObject({
      code: 'invalid_argument',
    });
    expect(await r.redis.exists(r.keys.launch('typo'))).toBe(0);
    await start(configOf());
    const record: LaunchRecord = await campaigns.launch('typo', {
      total: 1_000_000,
      sample: { 'gmail.com': 2, 'yahoo.com': 1 },
    });
    expect(record.forecast).toEqual({
      total: 1_000_000,
      domains: { 'gmail.com': 666_667, 'yahoo.com': 333_333 },
      sampleTotal: 3,
    });
  });

  it('stops a receiver whose projection passes the expiry after a governor cut, and says why', async () => {
    const config = configOf({
      delivery: { lifetimeMs: { critical: HOUR, high: HOUR, normal: HOUR, low: HOUR } },
      launch: { recheckMs: 200 },
    });
    await start(config);
    const campaigns = lifecycle();
    await campaigns.create({ id: 'cut' });
    // yahoo: 3,000 s at 10/s, within the hour.
    expect((await campaigns.launch('cut', FORECAST)).decision?.kind).toBe('accept');
    const adjustments = createAdjustments({ redis: r.redis, keys: r.keys, backpressure: config.backpressure });
    open.push({ close: () => adjustments.close() });
    await adjustments.setGoverned(r.keys.bucket('receiver', 'yahoo'), 0.25, 'complaints');
    const status = await until(
      () => campaigns.status('cut'),
      (s) => s.launch?.stopped.yahoo !== undefined,
    );
    expect(status.launch!.stopped.yahoo).toMatchObject({ domains: ['yahoo.com'] });
    expect(status.launch!.stopped.yahoo!.reason).toContain('bound by receiver yahoo: 10/s × 0.250 (lowered)');
    const gate = await campaigns.gate('cut');
    expect(gate.state === 'open' && gate.stopped['yahoo.com']).toContain('receiver yahoo stopped: projected to finish');
    // gmail is not stopped: it still finishes in time.
    expect(Object.keys(status.launch!.stopped)).toEqual(['yahoo']);
  });

  it("names the ESP's daily quota when what is left of it binds the campaign", async () => {
    const config = configOf();
    const logger = pino({ level: 'silent' });
    const adjustments = createAdjustments({ redis: r.redis, keys: r.keys, backpressure: config.backpressure });
    const signals = createSignals({ redis: r.redis, keys: r.keys });
    const organisations = createOrganisations({ config, logger });
    open.push(signals, { close: () => adjustments.close() }, { close: () => organisations.close() });
    const warmup = createWarmup({ config, redis: r.redis, keys: r.keys, adjustments, signals });
    const chore = createLaunchChore({
      config,
      redis: r.redis,
      keys: r.keys,
      adjustments,
      organisations,
      warmup,
      logger,
      holder: 'leader',
    });
    const campaigns = lifecycle();
    await campaigns.create({ id: 'quota' });
    await expect(campaigns.launch('quota', FORECAST, { timeoutMs: 0 })).rejects.toMatchObject({ code: 'no_scheduler' });
    // 10,000 left today of 50,000 a day: the other 90,000 take 1.8 days, within the 72 h of the low class.
    chore.noteQuota('ses', { max24HourSend: 50_000, sentLast24Hours: 40_000 });
    expect(await chore.run(Date.now())).toBe(1);
    const { decision } = (await campaigns.status('quota')).launch!;
    expect(decision).toMatchObject({
      kind: 'accept',
      shared: { limit: 'quota', key: 'ses', detail: '10000 left of Max24HourSend 50000' },
    });
    expect(decision!.shared.rate).toBeCloseTo(100_000 / (1.8 * 86_400), 6);
    expect(decision!.receivers.map((x) => x.binds.limit)).toEqual(['quota', 'quota']);
  });
});
