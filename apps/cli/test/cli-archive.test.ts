import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { MessageInput } from '@sluice/core';
import { createClient, type SluiceClient } from '@sluice/client';
import { useRedisPrefix } from '../../../test/support/redis-prefix.js';
import { runCli } from './run-cli.js';

// `sluice campaigns archive|delete|list --archived` (issue 29): through the campaign lifecycle.
const r = useRedisPrefix();
let client: SluiceClient;
let dir: string;
let config: string;

const mail: MessageInput = { from: 'Acme <hello@acme.test>', to: 'someone@example.test', subject: 'Hi', text: 'Hello' };

const sluice = (...args: string[]) =>
  runCli({ ...process.env, REDIS_URL: r.url, SLUICE_CONFIG: config, USER: 'tester' }, ...args);

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'sluice-cli-archive-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});
beforeEach(async () => {
  client = createClient({ redis: r.url, prefix: r.prefix, fleetCheck: 'off' });
  config = join(dir, `${r.prefix}.yaml`);
  await writeFile(config, `redis: { prefix: ${r.prefix} }\n`);
});
afterEach(async () => {
  await client.close();
});

describe('campaigns archive and delete', () => {
  it('refuses a campaign not finished, saying why; archives a cancelled one; lists it only with --archived; deletes it', async () => {
    await client.campaigns.create({ id: 'autumn', priority: 'low' });
    await client.sendBulk([1, 2].map((i) => ({ ...mail, to: `a${i}@example.test`, campaignId: 'autumn' })));

    const refused = await sluice('campaigns', 'archive', 'autumn');
    expect(refused).toEqual({
      code: 1,
      stdout: '',
      stderr: 'sluice campaigns archive: campaign autumn is not finished: 2 messages not yet final; cancel it first\n',
    });
    expect((await sluice('campaigns', 'delete', 'autumn')).code).toBe(1);

    expect((await sluice('campaigns', 'cancel', 'autumn', '--reason', 'wrong price', '--wait', '1ms')).code).toBe(0);
    expect(await sluice('campaigns', 'archive', 'autumn')).toMatchObject({
      code: 0,
      stdout: 'campaign autumn archived\n',
    });

    const [active, archived, show] = await Promise.all([
      sluice('campaigns', 'list', '--json'),
      sluice('campaigns', 'list', '--archived', '--json'),
      sluice('campaigns', 'show', 'autumn'),
    ]);
    expect(JSON.parse(active.stdout)).toEqual([]);
    expect(JSON.parse(archived.stdout)).toMatchObject([
      { id: 'autumn', state: 'archived', counts: { accepted: 2, cancelled: 2 }, archive: { by: 'tester' } },
    ]);
    expect(show.stdout).toMatch(/state\s+archived \S+ by tester \(cancelled\)/);
    await expect(client.send({ ...mail, campaignId: 'autumn' })).rejects.toMatchObject({ code: 'campaign_archived' });

    expect(await sluice('campaigns', 'delete', 'autumn')).toMatchObject({
      code: 0,
      stdout: 'campaign autumn deleted\n',
    });
    expect(JSON.parse((await sluice('campaigns', 'list', '--archived', '--json')).stdout)).toEqual([]);
    expect((await sluice('campaigns', 'show', 'autumn')).code).toBe(1);
  });
});
