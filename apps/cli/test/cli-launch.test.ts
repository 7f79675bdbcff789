import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { createClient, type CampaignStatus, type SluiceClient } from '@sluice/client';
import { childEnv } from '../../../test/support/env.js';
import { fromSources, startProcess, type TestProcess } from '../../../test/support/process.js';
import { useRedisPrefix } from '../../../test/support/redis-prefix.js';
import { runCli } from './run-cli.js';

// `sluice campaigns launch | show | approve` against a real scheduler process, whose governor
// leader decides the launch.
const r = useRedisPrefix();
let dir: string;
let scheduler: TestProcess | undefined;
let client: SluiceClient | undefined;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'sluice-cli-launch-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});
afterEach(async () => {
  await scheduler?.stop();
  await client?.close();
});

const sluice = runCli;

it('launches a campaign past the lifetime at one receiver: split, shown, approved', { timeout: 60_000 }, async () => {
  const config = join(dir, `${r.prefix}.yaml`);
  // yahoo takes 10/s: its 30,000 recipients need 3,000 s, the low class lives 20 minutes.
  await writeFile(
    config,
    [
      `redis: { prefix: ${r.prefix} }`,
      'defaultProvider: relay',
      'providers: { relay: { kind: smtp, host: 127.0.0.1, port: 2525, rate: 100 } }',
      'receivers: [{ name: yahoo, domains: [yahoo.com], rate: 10 }]',
      'organisations: { builtIn: false }',
      'reserves: { critical: 0 }',
      'governor: { intervalMs: 100 }',
      'delivery: { lifetimeMs: { critical: 3600000, high: 3600000, normal: 3600000, low: 1200000 } }',
      '',
    ].join('\n'),
  );
  const env = childEnv({ REDIS_URL: r.url, SLUICE_CONFIG: config, USER: 'tester' });
  scheduler = await startProcess('scheduler', fromSources('scheduler'), env, '"ready"');
  client = createClient({ redis: r.url, prefix: r.prefix, fleetCheck: 'off' });
  await client.campaigns.create({ id: 'spring', name: 'Spring sale', priority: 'low' });
  const forecast = join(dir, 'forecast.json');
  await writeFile(forecast, JSON.stringify({ total: 100_000, domains: { 'gmail.com': 70_000, 'yahoo.com': 30_000 } }));
  const bad = join(dir, 'bad.json');
  await writeFile(bad, JSON.stringify({ total: 100_000, domains: { 'gmail.com': 1 } }));

  const refused = await sluice(env, 'campaigns', 'launch', 'spring', bad);
  expect(refused.code).toBe(2);
  expect(refused.stderr).toContain('forecast.domains: add up to 1, not total 100000');

  const launched = await sluice(env, 'campaigns', 'launch', 'spring', forecast, '--wait', '20s');
  expect(launched.stderr).toBe('');
  expect(launched.code).toBe(0);
  expect(launched.stdout).toMatch(/decision\s+split \(past-expiry\)/);
  expect(launched.stdout).toMatch(/approval\s+required/);

  const show = await sluice(env, 'campaigns', 'show', 'spring');
  expect(show.code).toBe(0);
  expect(show.stdout).toMatch(/^campaign\s+spring \(Spring sale\)/);
  expect(show.stdout).toMatch(/forecast\s+100000 recipients, 2 domains/);
  expect(show.stdout).toContain('Waves');
  expect(show.stdout).toMatch(/\n\s*1\s+\S+Z \((in \S+|\S+ ago)\)\s+33334\s+33334\n/);
  expect(show.stdout).toContain('Receivers (2)');
  expect(show.stdout).toMatch(/yahoo\s+30000\s+10\/s\s+receiver yahoo: 10\/s\s+\S+Z \(in \S+\)\s+LATE/);
  expect(show.stdout).toMatch(/gmail\.com\s+70000\s+90\/s\s+provider relay: 100\/s/);

  expect((await sluice(env, 'campaigns', 'approve', 'spring')).code).toBe(2);
  const approved = await sluice(env, 'campaigns', 'approve', 'spring', '--reason', 'three waves are fine');
  expect(approved.code).toBe(0);
  expect(approved.stdout).toMatch(/approval\s+approved by tester .*: three waves are fine/);
  const again = await sluice(env, 'campaigns', 'approve', 'spring', '--reason', 'again');
  expect(again.code).toBe(1);
  expect(again.stderr).toContain('nothing awaits approval');

  const data = JSON.parse((await sluice(env, 'campaigns', 'show', 'spring', '--json')).stdout) as CampaignStatus;
  expect(data.launch?.decision).toMatchObject({ kind: 'split', approval: 'approved', approvedBy: 'tester' });
  expect(await client.campaigns.gate('spring')).toMatchObject({ state: 'open', maxPosition: 33_334 });
});
