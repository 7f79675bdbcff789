import { describe, expect, it } from 'vitest';
import {
  BUILT_IN_ORGANISATIONS,
  compileOrganisations,
  parseConfig,
  receiverNamed,
  receiverOfOrganisation,
} from '@sluice/core';

const builtIn = compileOrganisations(BUILT_IN_ORGANISATIONS);

describe('organisation patterns', () => {
  it('knows the big receivers by the MX hosts they publish', () => {
    expect(builtIn([{ exchange: 'smtp.google.com', priority: 1 }])).toBe('google');
    expect(builtIn([{ exchange: 'gmail-smtp-in.l.google.com', priority: 5 }])).toBe('google');
    expect(builtIn([{ exchange: 'aspmx2.googlemail.com', priority: 10 }])).toBe('google');
    expect(builtIn([{ exchange: 'acme-com.mail.protection.outlook.com', priority: 0 }])).toBe('microsoft');
    expect(builtIn([{ exchange: 'hotmail-com.olc.protection.outlook.com', priority: 2 }])).toBe('microsoft');
    expect(builtIn([{ exchange: 'acme-com.r-v1.mx.microsoft', priority: 0 }])).toBe('microsoft');
    expect(builtIn([{ exchange: 'mx-aol.mail.gm0.yahoodns.net', priority: 1 }])).toBe('yahoo');
    expect(builtIn([{ exchange: 'mx01.mail.icloud.com', priority: 10 }])).toBe('apple');
    expect(builtIn([{ exchange: 'mx2.zoho.eu', priority: 20 }])).toBe('zoho');
    expect(builtIn([{ exchange: 'us-smtp-inbound-1.mimecast.com', priority: 10 }])).toBe('mimecast');
    expect(builtIn([{ exchange: 'mx1-us1.ppe-hosted.com', priority: 10 }])).toBe('proofpoint');
    expect(builtIn([{ exchange: 'mx0a-001b2d01.pphosted.com', priority: 10 }])).toBe('proofpoint');
  });

  it('knows the receivers that have their own reply rules by their MX hosts', () => {
    const hosts: Readonly<Record<string, string>> = {
      'mx1a1.comcast.net': 'comcast',
      'al-ip4-mx-vip1.prodigy.net': 'att',
      'cxr.mx.a.cloudfilter.net': 'cox',
      'mx03.t-online.de': 't-online',
      'mxs.mail.ru': 'mailru',
      'mx10.tb.mail.iss.as9143.net': 'ziggo',
      'mx8.tb.ukmail.iss.as9143.net': 'ziggo',
      'mx1.free.fr': 'free',
      'in1-smtp.messagingengine.com': 'fastmail',
      'mailsec.protonmail.ch': 'protonmail',
      'd241253a.ess.barracudanetworks.com': 'barracuda',
      'mx1.acme.iphmx.com': 'ironport',
      'cluster1.eu.messagelabs.com': 'symantec',
      'route1.mx.cloudflare.net': 'cloudflare',
      'mx01.oxsus-vadesecure.net': 'vade',
      'mfsmax.docomo.ne.jp': 'docomo',
    };
    for (const [exchange, name] of Object.entries(hosts))
      expect(builtIn([{ exchange, priority: 10 }]), exchange).toBe(name);
    // Another ISP behind the same filtering service is not Cox.
    expect(builtIn([{ exchange: 'shaw.mx.a.cloudfilter.net', priority: 10 }])).toBeUndefined();
  });

  it('takes the most preferred MX host that matches, whatever order DNS lists them in', () => {
    const records = [
      { exchange: 'backup.example.net', priority: 1 },
      { exchange: 'acme-com.mail.protection.outlook.com', priority: 20 },
      { exchange: 'aspmx.l.google.com', priority: 5 },
    ];
    expect(builtIn(records)).toBe('google');
  });

  it('ignores case and the trailing dot, and never matches a look-alike host', () => {
    expect(builtIn([{ exchange: 'ASPMX.L.Google.COM.', priority: 1 }])).toBe('google');
    expect(builtIn([{ exchange: 'aspmx.l.google.com.evil.test', priority: 1 }])).toBeUndefined();
    expect(builtIn([{ exchange: 'notgoogle.com', priority: 1 }])).toBeUndefined();
  });

  it('leaves a domain alone when no MX host matches, or it has a null MX', () => {
    expect(builtIn([{ exchange: 'mx.acme.test', priority: 10 }])).toBeUndefined();
    expect(builtIn([{ exchange: '', priority: 0 }])).toBeUndefined();
    expect(builtIn([])).toBeUndefined();
  });

  it('matches configured patterns before the built-in table', () => {
    const match = compileOrganisations([{ name: 'acme-gateway', mx: ['*.google.com'] }, ...BUILT_IN_ORGANISATIONS]);
    expect(match([{ exchange: 'smtp.google.com', priority: 1 }])).toBe('acme-gateway');
  });
});

describe('receivers by organisation', () => {
  const config = parseConfig({
    defaults: { receiver: { rate: 7 } },
    receivers: [
      { name: 'google', organisation: 'google', rate: 20, burst: 5 },
      { name: 'partner', domains: ['partner.test'], rate: 3 },
      { name: 'yahoo', domains: ['yahoo.test'], rate: 4 },
    ],
  });

  it('gives a domain of an organisation with a policy that policy’s bucket', () => {
    expect(receiverOfOrganisation(config, 'workspace-1.test', 'google')).toEqual({
      name: 'google',
      rate: 20,
      burst: 5,
    });
  });

  it('gives the domains of an organisation without a policy one shared bucket at the default limit', () => {
    expect(receiverOfOrganisation(config, 'a.test', 'microsoft')).toEqual({
      name: 'microsoft',
      rate: 7,
      burst: undefined,
    });
    expect(receiverOfOrganisation(config, 'b.test', 'microsoft').name).toBe('microsoft');
  });

  it('charges one bucket at one rate: a policy named like the organisation owns it', () => {
    expect(receiverOfOrganisation(config, 'c.test', 'yahoo')).toEqual({ name: 'yahoo', rate: 4, burst: undefined });
  });

  it('leaves a domain without an organisation its own bucket', () => {
    expect(receiverOfOrganisation(config, 'solo.test', undefined)).toEqual({
      name: 'solo.test',
      rate: 7,
      burst: undefined,
    });
  });

  it('finds a job’s receiver by the name it carries', () => {
    expect(receiverNamed(config, 'google')).toEqual({ name: 'google', rate: 20, burst: 5 });
    expect(receiverNamed(config, 'solo.test')).toEqual({ name: 'solo.test', rate: 7, burst: undefined });
  });
});

describe('organisations config', () => {
  it('has defaults', () => {
    expect(parseConfig({}).organisations).toEqual({
      patterns: [],
      builtIn: true,
      cacheTtlMs: 3_600_000,
      negativeTtlMs: 300_000,
      cacheSize: 100_000,
      dnsServers: [],
      timeoutMs: 2_000,
    });
  });

  it('names the bad field', () => {
    expect(() => parseConfig({ receivers: [{ name: 'google', rate: 20 }] })).toThrow(
      /receivers\.0\.domains: needs domains or an organisation/,
    );
    expect(() => parseConfig({ receivers: [{ name: 'g', organisation: 'gogle', rate: 20 }] })).toThrow(
      /receivers\.0\.organisation: names no organisation/,
    );
    expect(() =>
      parseConfig({ organisations: { builtIn: false }, receivers: [{ name: 'g', organisation: 'google', rate: 1 }] }),
    ).toThrow(/receivers\.0\.organisation/);
    expect(() => parseConfig({ organisations: { patterns: [{ name: 'acme', mx: [] }] } })).toThrow(
      /organisations\.patterns\.0\.mx/,
    );
    expect(() => parseConfig({ organisations: { timeoutMs: 0 } })).toThrow(/organisations\.timeoutMs/);
    expect(() => parseConfig({ organisations: { ttl: 1 } })).toThrow(/organisations\.ttl: unknown key/);
  });

  it('takes a policy by organisation, and one of the configured patterns', () => {
    const config = parseConfig({
      organisations: { patterns: [{ name: 'acme-mx', mx: ['*.MX.ACME.test'] }] },
      receivers: [{ name: 'acme', organisation: 'acme-mx', rate: 2 }],
    });
    expect(config.organisations.patterns[0]?.mx).toEqual(['*.mx.acme.test']);
    expect(config.receivers[0]).toMatchObject({ name: 'acme', organisation: 'acme-mx' });
  });
});
