import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, expect, it } from 'vitest';
import { createClient, type SluiceClient } from '@sluice/client';
import { messagesOfJob } from '@sluice/core';
import { createQueues } from '@sluice/store';
import { childEnv } from '../../../test/support/env.js';
import { fromSources, startProcess, type TestProcess } from '../../../test/support/process.js';
import { useRedisPrefix } from '../../../test/support/redis-prefix.js';
import { runCli } from './run-cli.js';

// A real scheduler process decides each campaign's launch (its governor leader) before the
// injection; the campaign is paused, so what was injected stays in its queue to be looked at.
const r = useRedisPrefix();
let dir: string;
let config: string;
let client: SluiceClient;
let scheduler: TestProcess | undefined;

const sluice = (...args: string[]) =>
  runCli({ ...process.env, REDIS_URL: r.url, SLUICE_CONFIG: config, USER: 'tester' }, ...args);

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'sluice-inject-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});
beforeEach(async () => {
  client = createClient({ redis: r.url, prefix: r.prefix, fleetCheck: 'off' });
  config = join(dir, `${r.prefix}.yaml`);
  await writeFile(
    config,
    `redis: { prefix: ${r.prefix} }\ngovernor: { intervalMs: 100 }\norganisations: { builtIn: false }\n`,
  );
  const env = childEnv({ REDIS_URL: r.url, SLUICE_CONFIG: config });
  scheduler = await startProcess('scheduler', fromSources('scheduler'), env, '"ready"');
  await client.campaigns.create({
    id: 'spring',
    content: { from: 'Acme <news@acme.test>', subject: 'Hi {{first}}', text: 'Dear {{first}}' },
  });
  await client.campaigns.pause('spring');
  await client.campaigns.launch('spring', { total: 30, sample: { 'x.test': 1 } });
});
afterEach(async () => {
  await scheduler?.stop();
  await client.close();
});

/** The data a recipient's job carries, by position: its own job's, or its part of a block's. */
async function jobData(position: number): Promise<Record<string, unknown> | undefined> {
  const queues = createQueues({ redis: r.redis, keys: r.keys });
  const jobs = await queues.campaign('spring').getJobs(['waiting', 'delayed', 'active', 'prioritized']);
  await queues.close();
  const id = `spring_${position}`;
  return jobs.flatMap((j) => messagesOfJob(j.data as { id: string })).find((m) => m.id === id);
}

it('injects a CSV (columns as merge data), stops at a bad row naming it, and resumes where it stopped', async () => {
  const rows = [
    'to,first,key',
    ...Array.from({ length: 30 }, (_, i) => (i === 12 ? 'not-an-address,X,k12' : `u${i}@x.test,F${i},k${i}`)),
  ];
  const file = join(dir, 'list.csv');
  await writeFile(file, `${rows.join('\n')}\n`);

  const first = await sluice('campaigns', 'inject', 'spring', file);
  expect(first.code).toBe(1);
  expect(first.stderr).toMatch(/recipients\.12\.to: must be an email address/);
  expect(first.stderr).toMatch(/stopped with 12 recipients accepted: run the same command again to resume/);
  expect((await client.campaigns.status('spring')).cursor.position).toBe(12);
  expect(await jobData(3)).toMatchObject({
    to: 'u3@x.test',
    injected: { position: 3, key: 'k3', data: { first: 'F3' } },
  });
  // No content on the job: the campaign holds it once.
  expect(await jobData(3)).not.toHaveProperty('subject');

  const again = await sluice('campaigns', 'inject', 'spring', file, '--invalid', 'reject', '--json');
  expect(again.code).toBe(0);
  expect(JSON.parse(again.stdout)).toMatchObject({
    resumedFrom: 12,
    accepted: 18,
    rejected: 1,
    cursor: { position: 30 },
  });
  expect(await client.messages.status('spring_12')).toMatchObject({ state: 'rejected' });

  // Done: a third run accepts nothing and writes nothing twice.
  const done = await sluice('campaigns', 'inject', 'spring', file, '--json');
  expect(JSON.parse(done.stdout)).toMatchObject({ resumedFrom: 30, accepted: 0 });
  expect((await client.campaigns.status('spring')).counts.accepted).toBe(30);
});

it('injects NDJSON, names a line that is not JSON, and refuses a file it cannot read or tell the format of', async () => {
  const file = join(dir, 'list.ndjson');
  const lines = [
    JSON.stringify({ to: 'a@x.test', data: { first: 'A' } }),
    '',
    JSON.stringify({ to: 'b@x.test', data: { first: 'B' }, cursor: 'row-2' }),
    '{"to": "c@x.test"',
  ];
  await writeFile(file, lines.join('\n'));
  const bad = await sluice('campaigns', 'inject', 'spring', file);
  expect(bad.code).toBe(1);
  expect(bad.stderr).toMatch(/recipients\.2: line 4 of .*list\.ndjson is not JSON/);
  expect((await client.campaigns.status('spring')).cursor).toEqual({ position: 2, value: 'row-2' });

  const missing = await sluice('campaigns', 'inject', 'spring', join(dir, 'nope.csv'));
  expect(missing.code).toBe(2);
  expect(missing.stderr).toMatch(/cannot read/);
  const unknown = await sluice('campaigns', 'inject', 'spring', join(dir, 'list.txt'));
  expect(unknown.code).toBe(2);
  expect(unknown.stderr).toMatch(/--format ndjson\|csv/);
});
