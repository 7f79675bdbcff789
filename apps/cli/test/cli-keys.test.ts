import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest';
import { createAuthenticator } from '@sluice/store';
import { useRedisPrefix } from '../../../test/support/redis-prefix.js';
import { runCli } from './run-cli.js';

const r = useRedisPrefix();
const PEPPER = 'cli-pepper/Qw7eR4tY1uI9oP3aS6dF2gH8jK5lZ0x=';
let dir: string;
let config: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'sluice-cli-keys-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});
beforeEach(async () => {
  config = join(dir, `${r.prefix}.yaml`);
  await writeFile(config, `redis: { prefix: ${r.prefix} }\n`);
});

const sluice = (...args: string[]) =>
  runCli(
    { ...process.env, REDIS_URL: r.url, SLUICE_CONFIG: config, USER: 'ana', SLUICE_API_KEY_PEPPER: PEPPER },
    ...args,
  );

it('makes, lists, rotates and revokes a key; the token is printed once and works until revoked', async () => {
  expect((await sluice('keys', 'create', 'acme', '--scopes', 'read')).stderr).toMatch(/no tenant acme/);
  expect((await sluice('tenants', 'create', 'acme')).code).toBe(0);
  const made = await sluice('keys', 'create', 'acme', '--scopes', 'messages:send,read', '--name', 'billing', '--json');
  expect(made.code).toBe(0);
  const { token, key } = JSON.parse(made.stdout) as { token: string; key: { id: string } };
  const auth = createAuthenticator({ redis: r.redis, keys: r.keys, pepper: PEPPER });
  expect((await auth.authenticate(token, undefined)).key.scopes).toEqual(['messages:send', 'read']);

  const listed = await sluice('keys', 'list', 'acme');
  expect(listed.stdout).toContain(`slc_live_${key.id}…${token.slice(-4)}`);
  expect(listed.stdout).not.toContain(token);

  const rotated = await sluice('keys', 'rotate', 'acme', key.id, '--old-until', 'now', '--json');
  const next = JSON.parse(rotated.stdout) as { token: string; key: { id: string } };
  await expect(auth.authenticate(token, undefined)).rejects.toMatchObject({ code: 'key_expired' });
  expect((await auth.authenticate(next.token, undefined)).key.id).toBe(next.key.id);

  expect((await sluice('keys', 'revoke', 'acme', next.key.id)).stderr).toMatch(/--reason is required/);
  expect((await sluice('keys', 'revoke', 'acme', next.key.id, '--reason', 'leaked in a gist')).code).toBe(0);
  await expect(auth.authenticate(next.token, undefined)).rejects.toMatchObject({ code: 'key_revoked' });

  const shown = await sluice('tenants', 'show', 'acme');
  expect(shown.stdout).toMatch(/key\.revoked\s+ana\s+\S+\s+-\s+leaked in a gist/);
  expect(shown.stdout).toMatch(/key\.rotated/);
});

it('names a bad option of a new key and writes nothing', async () => {
  await sluice('tenants', 'create', 'acme');
  const bad = await sluice('keys', 'create', 'acme', '--scopes', 'read,mail.send');
  expect(bad.code).toBe(2);
  expect(bad.stderr).toMatch(/scopes\.1: must be one of messages:send, campaigns:write/);
  const cidr = await sluice('keys', 'create', 'acme', '--scopes', 'read', '--cidrs', '10.0.0.0/40');
  expect(cidr.stderr).toMatch(/cidrs\.0: must be an IP address or a CIDR block/);
  expect(JSON.parse((await sluice('keys', 'list', 'acme', '--json')).stdout)).toEqual([]);
  const unpeppered = await runCli(
    { ...process.env, REDIS_URL: r.url, SLUICE_CONFIG: config, USER: 'ana' },
    'keys',
    'create',
    'acme',
    '--scopes',
    'read',
  );
  expect(unpeppered.code).toBe(1);
  expect(unpeppered.stderr).toMatch(/no API key pepper: set api.keys.pepper or SLUICE_API_KEY_PEPPER/);
});

it("sets the owner's and the platform's status, each with who and why", async () => {
  await sluice('tenants', 'create', 'acme');
  const off = await sluice(
    'tenants',
    'status',
    'acme',
    'disable',
    '--as',
    'platform',
    '--reason',
    'abuse review',
    '--json',
  );
  expect(JSON.parse(off.stdout)).toMatchObject({ platform: { enabled: false, reason: 'abuse review', by: 'ana' } });
  const list = await sluice('tenants', 'list');
  expect(list.stdout).toMatch(/acme\s+enabled\s+disabled by ana at \S+: abuse review/);
  expect((await sluice('tenants', 'status', 'acme', 'off', '--as', 'platform', '--reason', 'x')).code).toBe(2);
  expect((await sluice('tenants', 'status', 'nobody', 'enable', '--as', 'owner', '--reason', 'x')).stderr).toMatch(
    /no tenant nobody/,
  );
});

it("puts a tenant on one of the config's plans, or on none, audited; an unknown plan is refused by name", async () => {
  await writeFile(
    config,
    `redis: { prefix: ${r.prefix} }\nplans:\n  pro: { caps: { day: 10000 }, keyCaps: { minute: 100 } }\n`,
  );
  const made = await sluice('tenants', 'create', 'acme', '--plan', 'pro', '--json');
  expect(JSON.parse(made.stdout)).toMatchObject({ created: true, tenant: { plan: 'pro' } });
  const wrong = await sluice('tenants', 'plan', 'acme', 'gold');
  expect([wrong.code, wrong.stderr]).toEqual([
    2,
    expect.stringMatching(/plan: no plan gold in the config's plans \(pro\)/),
  ]);
  expect((await sluice('tenants', 'plan', 'acme', 'none')).stdout).toMatch(/plan\s+none \(no caps\)/);
  const shown = await sluice('tenants', 'show', 'acme');
  expect(shown.stdout).toMatch(/tenant\.plan\s+ana\s+.*no plan/);
  expect(shown.stdout).toMatch(/tenant\.plan\s+ana\s+.*plan pro/);
});

it("sets a key's owner or platform status; keys list shows it disabled and by whom", async () => {
  await sluice('tenants', 'create', 'acme');
  const made = await sluice('keys', 'create', 'acme', '--scopes', 'messages:send', '--json');
  const { key } = JSON.parse(made.stdout) as { key: { id: string } };
  const off = await sluice('keys', 'status', 'acme', key.id, 'disable', '--as', 'platform', '--reason', 'leaked');
  expect(off.stdout).toMatch(/platform\s+disabled by ana at \S+: leaked/);
  expect((await sluice('keys', 'list', 'acme')).stdout).toMatch(/disabled by platform/);
  expect((await sluice('keys', 'status', 'acme', key.id, 'off', '--as', 'platform', '--reason', 'x')).code).toBe(2);
  expect(
    (await sluice('keys', 'status', 'acme', 'nokey1234567', 'enable', '--as', 'owner', '--reason', 'x')).stderr,
  ).toMatch(/has no key nokey1234567/);
});
