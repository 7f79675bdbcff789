import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '@sluice/core';
import { createOrganisations, type Organisations } from '@sluice/dispatch';
import { startDnsServer, type DnsServer } from '../../../test/support/dns-server.js';

const GOOGLE = { mx: [{ priority: 1, exchange: 'smtp.google.com' }] };
let dns: DnsServer;
const open: Organisations[] = [];
const warnings: unknown[] = [];

function organisations(settings: Record<string, unknown> = {}, receivers: unknown[] = []): Organisations {
  const config = parseConfig({ organisations: { dnsServers: [dns.address], timeoutMs: 300, ...settings }, receivers });
  const o = createOrganisations({ config, logger: { warn: (obj: unknown) => void warnings.push(obj) } });
  open.push(o);
  return o;
}

beforeAll(async () => {
  dns = await startDnsServer({
    'workspace.test': GOOGLE,
    'mixed.test': {
      mx: [
        { priority: 30, exchange: 'acme-com.mail.protection.outlook.com.' },
        { priority: 10, exchange: 'mx.mixed.test' },
        { priority: 20, exchange: 'ALT1.ASPMX.L.GOOGLE.COM.' },
      ],
    },
    'own.test': { mx: [{ priority: 10, exchange: 'mx.own.test' }] },
    'broken.test': 'servfail',
    'silent.test': 'drop',
  });
});
afterEach(() => {
  for (const o of open.splice(0)) o.close();
});
afterAll(async () => {
  await dns.close();
});

describe('organisations', () => {
  it('finds a domain’s organisation from its most preferred matching MX host', async () => {
    const o = organisations();
    expect(await o.organisationOf('workspace.test')).toBe('google');
    expect(await o.organisationOf('mixed.test')).toBe('google');
    expect(await o.organisationOf('own.test')).toBeUndefined();
    expect(await o.organisationOf('nowhere.test')).toBeUndefined();
  });

  it('answers a second time from its cache, without a DNS query, whatever the case of the domain', async () => {
    const o = organisations();
    const before = dns.queries('workspace.test');
    expect(await o.organisationOf('workspace.test')).toBe('google');
    expect(await o.organisationOf('Workspace.TEST.')).toBe('google');
    expect(await o.organisationOf('workspace.test')).toBe('google');
    expect(dns.queries('workspace.test') - before).toBe(1);
    expect(o.lookups).toBe(1);
  });

  it('asks again once the answer’s TTL is over, and sees a domain that moved', async () => {
    const o = organisations({ cacheTtlMs: 150 });
    dns.set('moving.test', GOOGLE);
    expect(await o.organisationOf('moving.test')).toBe('google');
    dns.set('moving.test', { mx: [{ priority: 0, exchange: 'moving-test.mail.protection.outlook.com' }] });
    expect(await o.organisationOf('moving.test')).toBe('google');
    await new Promise((r) => setTimeout(r, 200));
    expect(await o.organisationOf('moving.test')).toBe('microsoft');
    expect(dns.queries('moving.test')).toBe(2);
  });

  it('lets a domain whose DNS fails stand alone for negativeTtlMs, then asks again', async () => {
    const o = organisations({ negativeTtlMs: 150 });
    dns.set('flaky.test', 'servfail');
    expect(await o.organisationOf('flaky.test')).toBeUndefined();
    expect(await o.organisationOf('flaky.test')).toBeUndefined();
    expect(dns.queries('flaky.test')).toBe(1);
    expect(warnings).toContainEqual(expect.objectContaining({ domain: 'flaky.test' }));
    dns.set('flaky.test', GOOGLE);
    await new Promise((r) => setTimeout(r, 200));
    expect(await o.organisationOf('flaky.test')).toBe('google');
  });

  it('gives up on a DNS server that does not answer after timeoutMs, and does not ask again soon', async () => {
    const o = organisations({ timeoutMs: 200 });
    const started = Date.now();
    expect(await o.organisationOf('silent.test')).toBeUndefined();
    expect(Date.now() - started).toBeLessThan(1_000);
    const queries = dns.queries('silent.test');
    expect(await o.organisationOf('silent.test')).toBeUndefined();
    expect(dns.queries('silent.test')).toBe(queries);
  });

  it('sends one query for many concurrent asks about one domain', async () => {
    const o = organisations();
    dns.set('busy.test', GOOGLE);
    const answers = await Promise.all(Array.from({ length: 50 }, () => o.organisationOf('busy.test')));
    expect(new Set(answers)).toEqual(new Set(['google']));
    expect(dns.queries('busy.test')).toBe(1);
  });

  it('keeps at most cacheSize domains, dropping the least recently used', async () => {
    const o = organisations({ cacheSize: 2 });
    for (const d of ['lru-a.test', 'lru-b.test']) dns.set(d, GOOGLE);
    await o.organisationOf('lru-a.test');
    await o.organisationOf('lru-b.test');
    await o.organisationOf('lru-a.test'); // a is now the most recent
    await o.organisationOf('own.test'); // drops b
    await o.organisationOf('lru-a.test');
    await o.organisationOf('lru-b.test');
    expect(dns.queries('lru-a.test')).toBe(1);
    expect(dns.queries('lru-b.test')).toBe(2);
  });

  it('maps a domain to its receiver bucket, and never asks DNS about a domain a policy lists', async () => {
    const o = organisations({}, [
      { name: 'google', organisation: 'google', rate: 20, burst: 5 },
      { name: 'partner', domains: ['partner.test'], rate: 3 },
    ]);
    dns.set('partner.test', GOOGLE);
    expect(await o.receiverOf('workspace.test')).toEqual({ name: 'google', rate: 20, burst: 5 });
    expect(await o.receiverOf('partner.test')).toEqual({ name: 'partner', rate: 3, burst: undefined });
    expect(dns.queries('partner.test')).toBe(0);
    expect(await o.receiverOf('own.test')).toMatchObject({ name: 'own.test' });
    expect(await o.receiverOf('broken.test')).toMatchObject({ name: 'broken.test' });
  });

  it('knows a cached or listed domain’s receiver without waiting, and nothing before the first lookup', async () => {
    const o = organisations({}, [
      { name: 'google', organisation: 'google', rate: 20 },
      { name: 'partner', domains: ['partner.test'], rate: 3 },
    ]);
    dns.set('known.test', GOOGLE);
    expect(o.knownReceiverOf('partner.test')).toMatchObject({ name: 'partner' });
    expect(o.knownReceiverOf('known.test')).toBeUndefined();
    await o.receiverOf('known.test');
    expect(o.knownReceiverOf('known.test')).toMatchObject({ name: 'google', rate: 20 });
  });

  it('asks no DNS at all when no organisation can match', async () => {
    const o = organisations({ builtIn: false });
    const before = dns.queries();
    expect(await o.receiverOf('workspace.test')).toMatchObject({ name: 'workspace.test' });
    expect(dns.queries()).toBe(before);
  });
});
