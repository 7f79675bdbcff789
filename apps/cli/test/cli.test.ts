import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { SCHEMA_VERSION, type Keys, type MessageInput } from '@sluice/core';
import { createClient, type SluiceClient } from '@sluice/client';
import { createHeartbeat, createQueues } from '@sluice/store';
import { useRedisPrefix } from '../../../test/support/redis-prefix.js';
import { runCli } from './run-cli.js';

const r = useRedisPrefix();
const ROOT = resolve(import.meta.dirname, '../../..');

let redis: Redis;
let client: SluiceClient;
let prefix: string;
let keys: Keys;
let dir: string;
let config: string;

const mail: MessageInput = { from: 'Acme <hello@acme.test>', to: 'someone@example.test', subject: 'Hi', text: 'Hello' };

interface Result {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `sluice …` as a real process against the test's Redis and prefix. */
function sluiceProcess(...args: string[]): Promise<Result> {
  return new Promise((done, fail) => {
    const child = spawn(
      process.execPath,
      ['--conditions=@sluice/source', '--import', 'tsx', 'apps/cli/src/main.ts', ...args],
      {
        cwd: ROOT,
        env: { ...process.env, REDIS_URL: r.url, SLUICE_CONFIG: config, USER: 'tester' },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.once('error', fail);
    child.once('close', (code) => done({ code, stdout, stderr }));
  });
}

/**
 * Runs `sluice …` through the same `run()` the process's main.ts calls, with the same
 * environment: the process start (about a second of CPU each under tsx) is checked by the
 * help and failure tests, every other command runs in this process.
 */
function sluice(...args: string[]): Promise<Result> {
  return runCli({ ...process.env, REDIS_URL: r.url, SLUICE_CONFIG: config, USER: 'tester' }, ...args);
}

/** Every key of this test's deployment with its serialized value: what "writes nothing" compares. */
async function snapshot(): Promise<string[]> {
  const found = (await redis.keys(`*${prefix}*`)).sort();
  return Promise.all(
    found.map(async (k) => `${k} ${await redis.type(k)} ${(await redis.dumpBuffer(k)).toString('base64')}`),
  );
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'sluice-cli-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

beforeEach(async () => {
  redis = r.redis;
  prefix = r.prefix;
  keys = r.keys;
  client = createClient({ redis: r.url, prefix, fleetCheck: 'off' });
  config = join(dir, `${prefix}.yaml`);
  await writeFile(config, `redis: { prefix: ${prefix} }\n`);
});
afterEach(async () => {
  await client.close();
});

describe('help and usage errors', () => {
  it('lists the commands and explains each one', async () => {
    const [top, set, none] = await Promise.all([
      sluiceProcess('--help'),
      sluiceProcess('override', 'set', '--help'),
      sluiceProcess(),
    ]);
    expect(top.code).toBe(0);
    for (const c of ['status', 'campaigns pause', 'override set', 'override audit', 'explain', 'suppressions add'])
      expect(top.stdout).toContain(c);
    expect(set.code).toBe(0);
    expect(set.stdout).toMatch(/^Usage: sluice override set <scope> <name>/);
    for (const o of [
      '--pause',
      '--suspend',
      '--rate <n>',
      '--for <duration>',
      '--until <time>',
      '--reason <text>',
      '--actor <name>',
      '--json',
    ])
      expect(set.stdout).toContain(o);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('Usage: sluice <command>');
  });

  it('names the bad argument and exits 2', async () => {
    const [unknown, option, scope, rate, command] = await Promise.all([
      sluiceProcess('override', 'list', '--colour'),
      sluice('override', 'audit', '--count'),
      sluice('override', 'set', 'galaxy', 'x', '--pause', '--for', '10m', '--reason', 'r'),
      sluice('override', 'set', 'receiver', 'google', '--rate', 'fast', '--for', '10m', '--reason', 'r'),
      sluice('campaigns', 'relaunch'),
    ]);
    expect(unknown).toMatchObject({ code: 2, stdout: '' });
    expect(unknown.stderr).toContain('sluice override list: unknown option --colour');
    expect(option.stderr).toContain('option --count needs a value');
    expect(scope.stderr).toContain('<scope> must be one of provider, receiver, pool, campaign, tenant, got "galaxy"');
    expect(rate.stderr).toContain('--rate must be a positive number, got "fast"');
    expect(command.stderr).toContain('unknown command "relaunch"');
    for (const r of [option, scope, rate, command]) expect(r.code).toBe(2);
  });
});

describe('failures', () => {
  it('exits 1 naming Redis when it cannot be reached', async () => {
    const child = spawn(
      process.execPath,
      ['--conditions=@sluice/source', '--import', 'tsx', 'apps/cli/src/main.ts', 'override', 'list'],
      {
        cwd: ROOT,
        env: { ...process.env, REDIS_URL: 'redis://:secret@127.0.0.1:1', SLUICE_CONFIG: config },
        stdio: ['ignore', 'ignore', 'pipe'],
      },
    );
    let stderr = '';
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const code = await new Promise((r) => child.once('close', r));
    expect(code).toBe(1);
    expect(stderr).toContain('cannot connect to Redis at redis://:***@127.0.0.1:1');
    expect(stderr).not.toContain('secret');
  });
});

describe('override', () => {
  it('refuses an override without an expiry and writes nothing', async () => {
    const before = await snapshot();
    const [none, past] = await Promise.all([
      sluice('override', 'set', 'provider', 'ses', '--pause', '--reason', 'maintenance'),
      sluice('override', 'set', 'provider', 'ses', '--pause', '--until', '2001-01-01T00:00:00Z', '--reason', 'x'),
    ]);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('--for <duration> or --until <time> is required');
    expect(past.code).toBe(2);
    expect(past.stderr).toContain('--until 2001-01-01T00:00:00Z is not in the future');
    expect(await snapshot()).toEqual(before);
  });

  it('sets, lists, clears and audits, with --json', async () => {
    const until = new Date(Date.now() + 3_600_000).toISOString();
    const [set, suspend] = await Promise.all([
      sluice(
        'override',
        'set',
        'receiver',
        'google',
        '--rate',
        '5',
        '--for',
        '10m',
        '--reason',
        '421s from Gmail',
        '--json',
      ),
      sluice(
        'override',
        'set',
        'provider',
        'ses',
        '--suspend',
        '--until',
        until,
        '--reason',
        'SES review',
        '--actor',
        'alice',
      ),
    ]);
    expect(set.stderr).toBe('');
    expect(set.code).toBe(0);
    const o = JSON.parse(set.stdout) as { untilMs: number };
    expect(o).toMatchObject({
      scope: 'receiver',
      name: 'google',
      kind: 'rate',
      rate: 5,
      actor: 'tester',
      reason: '421s from Gmail',
    });
    expect(o.untilMs - Date.now()).toBeGreaterThan(9 * 60_000);
    expect(o.untilMs - Date.now()).toBeLessThanOrEqual(10 * 60_000);
    expect(suspend.code).toBe(0);
    expect(suspend.stdout).toMatch(/^provider ses: suspend until \S+ \(in 59m\d\ds\), set by alice: SES review\n$/);

    const [list, table, noReason] = await Promise.all([
      sluice('override', 'list', '--json'),
      sluice('override', 'list'),
      sluice('override', 'clear', 'receiver', 'google'),
    ]);
    expect((JSON.parse(list.stdout) as { name: string }[]).map((x) => x.name).sort()).toEqual(['google', 'ses']);
    expect(table.stdout).toMatch(/^SCOPE\s+NAME\s+KIND\s+RATE\s+UNTIL\s+ACTOR\s+REASON\n/);
    expect(table.stdout).toMatch(
      /\nreceiver\s+google\s+rate\s+5\/s\s+\S+Z \(in 9m\d\ds\)\s+tester\s+421s from Gmail\n/,
    );
    expect(noReason.code).toBe(2);
    expect(noReason.stderr).toContain('--reason is required');

    const clear = await sluice('override', 'clear', 'receiver', 'google', '--reason', 'Gmail recovered', '--json');
    expect(JSON.parse(clear.stdout)).toEqual({ scope: 'receiver', name: 'google', cleared: true });
    const [again, after, audit, newest] = await Promise.all([
      sluice('override', 'clear', 'receiver', 'google', '--reason', 'twice'),
      sluice('override', 'list', '--json'),
      sluice('override', 'audit', '--json'),
      sluice('override', 'audit', '--count', '1'),
    ]);
    expect(again).toMatchObject({ code: 0, stdout: 'receiver google: no override in force, nothing changed\n' });
    expect((JSON.parse(after.stdout) as { name: string }[]).map((x) => x.name)).toEqual(['ses']);
    const entries = JSON.parse(audit.stdout) as { action: string; name: string; actor: string; reason: string }[];
    const rows = entries.map((e) => [e.action, e.name, e.actor, e.reason]);
    expect(rows[0]).toEqual(['clear', 'google', 'tester', 'Gmail recovered']); // newest first
    expect(rows.slice(1).sort()).toEqual([
      ['set', 'google', 'tester', '421s from Gmail'],
      ['set', 'ses', 'alice', 'SES review'],
    ]);
    expect(newest.stdout.trim().split('\n')).toHaveLength(2); // the header and the newest entry
    expect(newest.stdout).toMatch(/\n\S+Z\s+clear\s+receiver\s+google/);
    expect((await sluice('override', 'clear', 'provider', 'ses', '--reason', 'done')).code).toBe(0);
  });
});

describe('campaigns', () => {
  it('lists, pauses and resumes, as Redis shows', async () => {
    await client.campaigns.create({ id: 'spring', name: 'Spring sale', priority: 'low' });
    await client.sendBulk([1, 2, 3].map((i) => ({ ...mail, to: `r${i}@example.test`, campaignId: 'spring' })));
    const list = await sluice('campaigns', 'list', '--json');
    expect(list.code).toBe(0);
    const rows = JSON.parse(list.stdout) as { id: string }[];
    expect(rows.find((r) => r.id === 'spring')).toMatchObject({
      id: 'spring',
      state: 'active',
      counts: { accepted: 3 },
      queue: { waiting: 3 },
    });

    expect(await sluice('campaigns', 'pause', 'spring')).toMatchObject({ code: 0, stdout: 'campaign spring paused\n' });
    expect((await client.campaigns.status('spring')).paused).toBe(true);
    expect(await redis.hget(keys.campaign('spring'), 'paused')).toBe('1');
    const [table, unknown] = await Promise.all([sluice('campaigns', 'list'), sluice('campaigns', 'pause', 'nope')]);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('no campaign with id nope');
    expect(table.stdout).toMatch(/^ID\s+STATE\s+PRIORITY\s+ACCEPTED/);
    expect(table.stdout).toMatch(/spring\s+paused\s+low\s+3\s/);

    expect((await sluice('campaigns', 'resume', 'spring', '--json')).stdout).toBe(
      `${JSON.stringify({ id: 'spring', paused: false }, null, 2)}\n`,
    );
    expect((await client.campaigns.status('spring')).paused).toBe(false);
    expect(await redis.hget(keys.campaign('spring'), 'paused')).toBeNull();
  });

  it('cancels: every message not yet final ends cancelled, its jobs are gone, and it stays cancelled', async () => {
    await client.campaigns.create({ id: 'autumn', priority: 'low' });
    const sent = await client.sendBulk(
      [1, 2].map((i) => ({ ...mail, to: `a${i}@example.test`, campaignId: 'autumn' })),
    );
    const r = await sluice('campaigns', 'cancel', 'autumn', '--reason', 'wrong price', '--json');
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ id: 'autumn', cancelled: 2, alreadyFinal: 0, stillInFlight: [] });
    for (const { id } of sent)
      expect(await client.messages.status(id)).toMatchObject({
        state: 'cancelled',
        lastReply: 'cancelled by tester: wrong price',
      });
    expect(await client.campaigns.status('autumn')).toMatchObject({
      paused: true,
      pending: 0,
      queue: { waiting: 0, delayed: 0, active: 0 },
    });

    const [list, resume] = await Promise.all([
      sluice('campaigns', 'list', '--json'),
      sluice('campaigns', 'resume', 'autumn'),
    ]);
    expect(
      (JSON.parse(list.stdout) as { id: string; state: string; counts: { cancelled: number } }[]).find(
        (c) => c.id === 'autumn',
      ),
    ).toMatchObject({ state: 'cancelled', counts: { cancelled: 2 } });
    expect(resume.code).toBe(1);
    expect(resume.stderr).toContain('campaign autumn was cancelled: it cannot be resumed');
    expect((await client.campaigns.status('autumn')).paused).toBe(true);
  });

  it('refuses to resume a cancelled campaign: exit 1 with campaign_cancelled’s message, queue and flag stay paused', async () => {
    await client.campaigns.create({ id: 'recalled', priority: 'low' });
    await client.send({ ...mail, to: 'w@example.test', campaignId: 'recalled' });
    expect((await sluice('campaigns', 'cancel', 'recalled', '--reason', 'wrong price', '--wait', '1ms')).code).toBe(0);
    const resume = await sluice('campaigns', 'resume', 'recalled', '--json');
    expect(resume).toEqual({
      code: 1,
      stdout: '',
      stderr:
        'sluice campaigns resume: campaign recalled was cancelled: it cannot be resumed (cancelling cannot be undone)\n',
    });
    const queues = createQueues({ redis, keys });
    try {
      expect(await queues.campaign('recalled').isPaused()).toBe(true);
    } finally {
      await queues.close();
    }
    expect(await redis.hmget(keys.campaign('recalled'), 'paused', 'cancelled')).toEqual(['1', '1']);
  });
});

describe('explain', () => {
  it('says an unknown id is unknown (exit 1) and a queued message is queued', async () => {
    const { id } = await client.send({ ...mail, to: 'queued@example.test' });
    const [unknown, r, j] = await Promise.all([
      sluice('explain', 'm-nothing-here', '--json'),
      sluice('explain', id),
      sluice('explain', id, '--json'),
    ]);
    expect(unknown.code).toBe(1);
    expect(JSON.parse(unknown.stdout)).toMatchObject({ id: 'm-nothing-here', state: 'unknown', attempts: 0 });
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(new RegExp(`^message\\s+${id}\\nstate\\s+queued\\nsummary\\s+\\S`));
    expect(r.stdout).toMatch(/attempts\s+0/);
    expect(r.stdout).toMatch(/\n {2}to\s+queued@example\.test/);
    expect(JSON.parse(j.stdout)).toMatchObject({ state: 'queued', record: { to: 'queued@example.test' } });
  });
});

describe('suppressions', () => {
  it('adds, gets, lists and removes', async () => {
    const add = await sluice('suppressions', 'add', 'Jane@Example.test', '--reason', 'asked by phone');
    expect(add).toMatchObject({ code: 0, stdout: 'Jane@Example.test suppressed for tenant default\n' });
    const [get, list, bad] = await Promise.all([
      sluice('suppressions', 'get', 'jane@example.test', '--json'),
      sluice('suppressions', 'list'),
      sluice('suppressions', 'add', 'not-an-address', '--reason', 'x'),
    ]);
    expect(get.code).toBe(0);
    expect(JSON.parse(get.stdout)).toMatchObject({
      address: 'jane@example.test',
      source: 'manual',
      reason: 'asked by phone',
    });
    expect(await client.suppressions.get('default', 'jane@example.test')).toMatchObject({ source: 'manual' });
    expect(list.stdout).toMatch(/jane@example\.test\s+manual\s+-\s+\S+Z\s+asked by phone/);

    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('<address>: must be an email address');

    const remove = await sluice('suppressions', 'remove', 'jane@example.test', '--json');
    expect(JSON.parse(remove.stdout)).toEqual({ address: 'jane@example.test', tenant: 'default', removed: true });
    const gone = await sluice('suppressions', 'get', 'jane@example.test');
    expect(gone).toMatchObject({ code: 1, stdout: 'jane@example.test is not suppressed for tenant default\n' });
    expect(await client.suppressions.get('default', 'jane@example.test')).toBeNull();
  });
});

describe('status', () => {
  it('prints every section, and the snapshot with --json', async () => {
    await client.campaigns.create({ id: 'spring', name: 'Spring sale', priority: 'low' });
    const [text, data] = await Promise.all([sluice('status'), sluice('status', '--json')]);
    expect(text.stderr).toBe('');
    expect(text.code).toBe(0);
    for (const section of ['Keys', 'Queues', 'Outcomes', 'Circuits', 'Overrides', 'Campaigns'])
      expect(text.stdout).toContain(`\n${section}`);
    expect(text.stdout).toMatch(/provider\s+ses\s/);
    const s = JSON.parse(data.stdout) as { keys: { scope: string; name: string }[]; campaigns: { id: string }[] };
    expect(s.keys).toContainEqual(expect.objectContaining({ scope: 'provider', name: 'ses' }));
    expect(s.campaigns.map((c) => c.id)).toContain('spring');
  });

  it('shows the fleet: none under the prefix, then a worker beating with its sandbox provider', async () => {
    const none = await sluice('status');
    expect(none.stdout).toContain('\nFleet\nno process beats under this prefix: no fleet runs here');
    const beat = createHeartbeat({ redis, keys, role: 'worker', sandbox: ['ses'] });
    await beat.start();
    const one = await sluice('status');
    await beat.close();
    expect(one.stdout).toMatch(new RegExp(`${beat.id}\\s+worker\\s+\\d+\\.\\d+\\.\\d+\\s+${SCHEMA_VERSION}\\s`));
    expect(one.stdout).toContain('SANDBOX: ses send to the local sandbox ESP; their mail never leaves');
    expect(one.stdout).toContain('no scheduler runs: nothing is admitted');
  });
});

describe('replies unknown', () => {
  it('lists the latest unknown replies newest first, of one receiver with --receiver, and refuses a bad --limit', async () => {
    const { createStore } = await import('@sluice/store');
    const store = createStore({ redis, keys });
    const kept = [
      { at: 1_000, receiver: 'google', provider: 'ses', reply: '550 5.9.9 something new', version: 'v1' },
      { at: 2_000, receiver: 'acme', provider: 'ses', reply: '451 what is this', version: 'v1' },
      { at: 3_000, receiver: 'google', provider: 'smtp', reply: '421 another\nline', version: 'v1' },
    ];
    for (const r of kept) await store.keepUnknownReply(r);
    const all = await sluice('replies', 'unknown', '--json');
    expect(all.code).toBe(0);
    expect((JSON.parse(all.stdout) as { at: number }[]).map((r) => r.at)).toEqual([3_000, 2_000, 1_000]);
    const google = await sluice('replies', 'unknown', '--receiver', 'google', '--limit', '1');
    expect(google.code).toBe(0);
    expect(google.stdout).toContain('421 another line');
    expect(google.stdout).not.toContain('something new');
    expect(google.stdout).not.toContain('what is this');
    const none = await sluice('replies', 'unknown', '--receiver', 'nobody');
    expect(none.stdout).toContain('no unknown replies from nobody kept');
    const bad = await sluice('replies', 'unknown', '--limit', '0');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--limit');
  });
});
