/**
 * Receiving organisations by the MX hosts of a recipient domain. A thousand Workspace
 * domains are one receiver (Google) with one set of limits and one reputation, so they
 * share one quota key; only their MX hosts say so.
 */

/** The built-in table's version: bump it with every change, so logs say which table decided. */
export const ORGANISATIONS_VERSION = '2026.12.03-2';

/** An organisation and the MX host globs that receive its mail. */
export interface OrganisationPattern {
  /** The organisation's key (a receiver name when no policy names it). */
  name: string;
  /**
   * MX host globs, lower case, without the trailing dot. `*` matches any run of
   * characters, dots included, so `*.google.com` is every host under google.com (but not
   * google.com itself).
   */
  mx: readonly string[];
}

/** One MX record, as `node:dns` returns it. */
export interface MxRecord {
  exchange: string;
  priority: number;
}

/**
 * Organisations that receive mail for many domains, by the MX hosts they publish. Each
 * pattern is a host name the organisation owns: a receiver with its own limits behind it.
 * Security gateways (Mimecast, Proofpoint) count as receivers too: they accept or refuse
 * the mail and throttle by their own rules, whoever hosts the mailbox behind them.
 */
export const BUILT_IN_ORGANISATIONS: readonly OrganisationPattern[] = [
  {
    name: 'google',
    mx: [
      // Workspace since 2023: one MX, smtp.google.com; before: ASPMX.L.GOOGLE.COM and
      // ALT1–ALT4.ASPMX.L.GOOGLE.COM (https://intodns.ai/citations/google-workspace-mx-records).
      'smtp.google.com',
      'aspmx.l.google.com',
      '*.aspmx.l.google.com',
      // gmail.com's own MX (gmail-smtp-in.l.google.com) and every other Google-run host.
      '*.google.com',
      // Older Workspace sets list aspmx2/aspmx3.googlemail.com
      // (https://gist.github.com/abhiyerra/6f205af59b20cce5523e810e9f3b2f33).
      '*.googlemail.com',
    ],
  },
  {
    name: 'microsoft',
    mx: [
      // Microsoft 365: <domain-with-dashes>.mail.protection.outlook.com, one per domain
      // (https://mxrecordchecker.com/resources/microsoft-365-mx-records). Consumer
      // outlook.com and hotmail.com answer as <domain>.olc.protection.outlook.com (as
      // resolved; we found no page of Microsoft's that lists it).
      '*.mail.protection.outlook.com',
      '*.olc.protection.outlook.com',
      // New tenants since March 2024: <domain>.<zone>.mx.microsoft
      // (https://c7solutions.com/2024/02/what-is-mx-microsoft).
      '*.mx.microsoft',
    ],
  },
  {
    name: 'yahoo',
    mx: [
      // Yahoo and AOL (mx-aol.mail.gm0.yahoodns.net) share one infrastructure, and Yahoo
      // Business Mail uses mx1/mx2.biz.mail.yahoo.com
      // (https://www.suped.com/knowledge/email-deliverability/technical/what-are-the-current-yahoo-mail-server-names-and-infrastructure).
      '*.yahoodns.net',
      '*.biz.mail.yahoo.com',
    ],
  },
  {
    name: 'apple',
    // iCloud Mail and iCloud+ custom domains: mx01/mx02.mail.icloud.com
    // (https://support.apple.com/102374).
    mx: ['*.mail.icloud.com'],
  },
  {
    name: 'zoho',
    // mx, mx2, mx3 in each region: zoho.com, .eu, .in, .com.au, .jp
    // (https://mxrecordchecker.com/resources/zoho-mx-records).
    mx: ['mx*.zoho.com', 'mx*.zoho.eu', 'mx*.zoho.in', 'mx*.zoho.com.au', 'mx*.zoho.jp'],
  },
  {
    name: 'yandex',
    // Yandex 360 for domains: one MX, mx.yandex.net (https://yandex.com.tr/support/kurum/set-mail/mx.html).
    mx: ['mx.yandex.net', '*.mx.yandex.net'],
  },
  {
    name: 'mimecast',
    // <region>-smtp-inbound-<n>.mimecast.com (https://gist.github.com/wjessop/682989a200deb38a2a1dfbb880fb5cfa);
    // "from a sender's perspective, Mimecast is effectively its own mailbox provider"
    // (https://www.spamresource.com/2024/02/isp-deliverability-guide-mimecast.html).
    mx: ['*.mimecast.com'],
  },
  {
    name: 'proofpoint',
    // Proofpoint Essentials: mx1-us1.ppe-hosted.com, mx1-eu1.ppe-hosted.com …
    // (https://github.com/pect0ral/mail_recon).
    // Enterprise hosted: mxa-<id>.gslb.pphosted.com, mx0a-<id>.pphosted.com (a published zone's
    // MX "mxa-0095a102.gslb.pphosted.com (Proofpoint)"; the Received lines of lists.ozlabs.org).
    mx: ['*.ppe-hosted.com', '*.pphosted.com'],
  },
  // The organisations below have their own reply rule sets (`@sluice/providers`,
  // receiver-rules.ts), read for a reply from one of their MX hosts.
  {
    name: 'comcast',
    // mx1a1.comcast.net (InMotion Hosting's telcheck script, HOST_COMCAST); mx1.comcast.net
    // (github:sisimai/set-of-emails). Every host under comcast.net is Comcast's own.
    mx: ['*.comcast.net'],
  },
  {
    name: 'att',
    // att.net, sbcglobal.net, bellsouth.net: al-ip4-mx-vip1.prodigy.net, ff-ip4-mx-vip1/2.prodigy.net
    // (telcheck, HOST_ATT; a block checker's MX list for att and bellsouth). prodigy.net is AT&T's.
    mx: ['*.prodigy.net'],
  },
  {
    name: 'cox',
    // cox.net's MX: cxr.mx.a.cloudfilter.net (telcheck, HOST_COX). Other cloudfilter.net hosts
    // serve other ISPs, so only Cox's own prefix.
    mx: ['cxr.mx.*.cloudfilter.net'],
  },
  {
    name: 't-online',
    // mx00–mx03.t-online.de ("host mx03.t-online.de[194.25.134.73] refused to talk to me",
    // https://bllmnn.de/2024/05/fehler-554-none-bad-reputation-beim-mailversand-an-t-online-de).
    mx: ['mx*.t-online.de'],
  },
  {
    name: 'ziggo',
    // Ziggo (ziggo.nl, home.nl, upcmail.nl) receives on its AS9143 hosts:
    // mx10.tb.mail.iss.as9143.net, mx.mnd.mail.iss.as9143.net, and its business mail's
    // mx8.tb.ukmail.iss.as9143.net (the corpus's Ziggo replies name each).
    mx: ['*.iss.as9143.net'],
  },
  {
    name: 'mailru',
    // mail.ru's MX: mxs.mail.ru (github:sisimai/set-of-emails, "host mxs.mail.ru[94.100.180.31] said: 550 5.7.1").
    mx: ['mxs.mail.ru'],
  },
  {
    name: 'free',
    // free.fr's MX: mx1.free.fr (github:sisimai/set-of-emails, an mx1.free.fr transcript).
    mx: ['mx*.free.fr'],
  },
  {
    name: 'fastmail',
    // in1-smtp.messagingengine.com, in2-smtp… (telcheck, HOST_FASTMAIL).
    mx: ['*.messagingengine.com'],
  },
  {
    name: 'protonmail',
    // Proton's custom domains: MX 10 mail.protonmail.ch, 20 mailsec.protonmail.ch (as the DNS set-ups of many published zones give them).
    mx: ['mail.protonmail.ch', 'mailsec.protonmail.ch'],
  },
  {
    name: 'barracuda',
    // Email Gateway Defense: <customer-id>.ess.barracudanetworks.com
    // (https://www.captaindns.com/en/blog/barracuda-secure-email-gateway: d241253a.ess.barracudanetworks.com).
    mx: ['*.ess.barracudanetworks.com'],
  },
  {
    name: 'ironport',
    // Cisco Secure Email Cloud Gateway: mx1.<customer>.iphmx.com
    // (https://www.captaindns.com/en/blog/cisco-secure-email-gateway), and Threat Defense mx.<region>.etd.cisco.com
    // (https://docs.cmd.cisco.com/en/Content/secure-email-threat-defense-user-guide/Setup%20SMTP/Set%20up%20Your%20Message%20Source/SMTP.htm).
    mx: ['*.iphmx.com', 'mx.*.etd.cisco.com'],
  },
  {
    name: 'symantec',
    // Broadcom (Symantec) Email Security.cloud, formerly MessageLabs: cluster<n>.<region>.messagelabs.com;
    // its replies name server-<n>.tower-<n>.messagelabs.com (github:sisimai/set-of-emails).
    mx: ['*.messagelabs.com'],
  },
  {
    name: 'cloudflare',
    // Email Routing: <name>.mx.cloudflare.net (https://developers.cloudflare.com/email-routing/postmaster/).
    mx: ['*.mx.cloudflare.net'],
  },
  {
    name: 'vade',
    // Vade for ISPs (EarthLink and others): mx01–mx04.oxsus-vadesecure.net (telcheck, HOST_EARTHLINK).
    mx: ['*.oxsus-vadesecure.net'],
  },
  {
    name: 'docomo',
    // NTT docomo: mfsmax.docomo.ne.jp ("Remote-MTA: dns; mfsmax.docomo.ne.jp", github:sisimai/rb-sisimai:lib/sisimai/rhost.rb).
    mx: ['mfsmax.docomo.ne.jp'],
  },
];

/** Lower case, without the root's trailing dot: how DNS names are compared. */
export function normalizeHost(host: string): string {
  const lower = host.toLowerCase();
  return lower.endsWith('.') ? lower.slice(0, -1) : lower;
}

function globToRegExp(glob: string): RegExp {
  const body = normalizeHost(glob)
    .split('*')
    .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
    .join('.*');
  return new RegExp(`^${body}$`);
}

/** Finds the organisation of a domain from its MX records. */
export type OrganisationMatcher = (records: readonly MxRecord[]) => string | undefined;

/**
 * Compiles patterns into a matcher: the organisation is that of the most preferred MX
 * host (lowest priority number) that matches a pattern, since that is where mail for the
 * domain goes first. Patterns are tried in order, so extra ones listed before the
 * built-ins win. No matching host: undefined, the domain stands alone.
 */
export function compileOrganisations(patterns: readonly OrganisationPattern[]): OrganisationMatcher {
  const compiled = patterns.flatMap((p) => p.mx.map((glob) => ({ name: p.name, re: globToRegExp(glob) })));
  return (records) => {
    const byPreference = [...records].sort((a, b) => a.priority - b.priority);
    for (const record of byPreference) {
      const host = normalizeHost(record.exchange);
      // A null MX (RFC 7505, ".") accepts no mail: it names no organisation.
      if (host === '') continue;
      const hit = compiled.find((c) => c.re.test(host));
      if (hit) return hit.name;
    }
    return undefined;
  };
}
