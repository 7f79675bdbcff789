import { describe, expect, it } from 'vitest';
import {
  CLASSIFIER_VERSION,
  FAMILIES,
  MAX_HINT_MS,
  RECEIVER_RULES,
  RULES,
  classifyReply,
  normaliseReplyText,
  receiversOf,
  type Reply,
} from '../src/classify.js';
import { loadCorpus, replyOf } from './corpus.js';
import { NOW, REPLIES } from './fixtures/replies.js';

const RULE_IDS = new Set(RULES.map((r) => r.id));
// The name carries who, the reply's first 60 characters and its source, so a failure names where the text came from.
const named = REPLIES.map(
  (f) => [`${f.who}: ${f.reply.text.replace(/\s+/g, ' ').slice(0, 60)} [${f.source}]`, f] as const,
);

describe('classifyReply on published replies', () => {
  it.each(named)('%s', (_name, { reply, expect: want }) => {
    const c = classifyReply(reply, NOW);
    expect({
      family: c.family,
      permanent: c.permanent,
      suppress: c.suppress,
      scope: c.scope,
      retryAfterMs: c.retryAfterMs,
    }).toEqual({
      family: want.family,
      permanent: want.permanent,
      suppress: want.suppress ?? false,
      scope: want.scope,
      retryAfterMs: want.retryAfterMs,
    });
    expect(c.version).toBe(CLASSIFIER_VERSION);
    expect(RULE_IDS.has(c.rule)).toBe(true);
  });
});

describe('the rule table', () => {
  it('has unique rule ids and a version', () => {
    expect(RULE_IDS.size).toBe(RULES.length);
    expect(CLASSIFIER_VERSION).toMatch(/^\d{4}\.\d{2}\.\d{2}-\d+$/);
  });

  it('has no dead family: every family is reached by some published reply', () => {
    const reached = new Set(REPLIES.map((f) => classifyReply(f.reply, NOW).family));
    expect([...FAMILIES].filter((f) => !reached.has(f))).toEqual([]);
  });

  it('suppresses only a permanent bad recipient or bad domain', () => {
    for (const f of REPLIES) {
      const c = classifyReply(f.reply, NOW);
      expect(c.suppress).toBe(c.permanent && (c.family === 'bad_recipient' || c.family === 'bad_domain'));
    }
  });

  it('has at least three published replies from each major provider', () => {
    for (const who of ['Gmail', 'Yahoo', 'Microsoft', 'Apple', 'SES', 'SendGrid', 'Mailgun']) {
      expect(REPLIES.filter((f) => f.who === who).length, who).toBeGreaterThanOrEqual(3);
    }
  });

  it('suppresses a 550 5.1.1 but not a 550 5.7.1 block', () => {
    const unknownUser = classifyReply(
      { channel: 'smtp', status: 550, text: '550 5.1.1 <x@example.com>: Recipient address rejected: User unknown' },
      NOW,
    );
    const block = classifyReply(
      {
        channel: 'smtp',
        status: 550,
        text: '550 5.7.1 Service unavailable; client host [203.0.113.5] blocked using zen.spamhaus.org',
      },
      NOW,
    );
    expect(unknownUser).toMatchObject({ family: 'bad_recipient', permanent: true, suppress: true, enhanced: '5.1.1' });
    expect(block).toMatchObject({ family: 'policy_block', permanent: true, suppress: false, enhanced: '5.7.1' });
  });

  // Rows no published reply above reaches, each with the smallest reply that should reach
  // it. These texts are synthetic (RFC 3463 / RFC 5321 codes with plain wording, or a code of a
  // receiver's published table in its own form).
  const synthetic: readonly [rule: string, reply: Reply, family: string][] = [
    ['http.429', { channel: 'http', status: 429, text: '' }, 'throttled'],
    ['http.403', { channel: 'http', status: 403, text: 'Forbidden' }, 'sender_config'],
    ['smtp.mailbox-4xx', { channel: 'smtp', status: 450, text: '450 4.2.0 Mailbox busy' }, 'mailbox_temporary'],
    [
      'smtp.sender-code',
      { channel: 'smtp', status: 553, text: "553 5.1.8 Bad sender's system address" },
      'policy_block',
    ],
    ['smtp.bad-mailbox-code', { channel: 'smtp', status: 553, text: '553 5.1.3 Destination syntax' }, 'bad_recipient'],
    [
      'smtp.daily-quota',
      { channel: 'smtp', status: 452, text: '452 4.2.2 You have reached your monthly message limit' },
      'quota_exhausted',
    ],
    ['smtp.too-many-recipients-code', { channel: 'smtp', status: 452, text: '452 4.5.3 Try again' }, 'throttled'],
    [
      'smtp.sender-cause-temporary-5xx',
      { channel: 'smtp', status: 554, text: '554 5.7.1 Your IP has been temporarily rejected' },
      'reputation_deferral',
    ],
    ['smtp.503', { channel: 'smtp', status: 503, text: '503 5.5.1 Error: need RCPT command' }, 'transient_system'],
    // Spectrum's code table gives each code's meaning, not the reply line: its AUP#I-<code> form.
    ['charter.listed', { channel: 'smtp', status: 554, text: '554 5.7.1 AUP#I-1220' }, 'policy_block'],
    ['charter.system', { channel: 'smtp', status: 451, text: '451 4.3.0 AUP#I-1090' }, 'transient_system'],
    ['charter.size', { channel: 'smtp', status: 552, text: '552 5.3.4 AUP#O-1530' }, 'content_rejected'],
    // Comcast's table gives its codes' meanings, not its reply lines.
    ['comcast.dynamic', { channel: 'smtp', status: 550, text: '550 5.7.1 ES000001' }, 'policy_block'],
    // The second reading (reply-lexicon.ts): words near each other, in any order and script.
    ['smtp.near.recipient', { channel: 'smtp', status: 550, text: '550 Empfänger unbekannt' }, 'bad_recipient'],
    [
      'smtp.near.mailbox-full',
      { channel: 'smtp', status: 552, text: '552 La boîte de ce destinataire est saturée' },
      'mailbox_full',
    ],
    [
      'smtp.near.window-limit',
      { channel: 'smtp', status: 550, text: '550 You have used up the allowance of your plan' },
      'quota_exhausted',
    ],
    ['smtp.near.volume', { channel: 'smtp', status: 550, text: '550 Zu viele Nachrichten, bitte warten' }, 'throttled'],
    [
      'smtp.near.content',
      { channel: 'smtp', status: 550, text: '550 Deine Nachricht ist zu groß' },
      'content_rejected',
    ],
    [
      'smtp.near.our-login',
      { channel: 'smtp', status: 550, text: '550 Authentifizierung erforderlich' },
      'sender_config',
    ],
    [
      'smtp.near.our-identity',
      { channel: 'smtp', status: 553, text: '553 Envelope sender differs from the authenticated user' },
      'sender_config',
    ],
    ['smtp.near.domain', { channel: 'smtp', status: 550, text: '550 Le domaine est inconnu' }, 'bad_domain'],
    [
      'smtp.spam-verdict-words',
      { channel: 'smtp', status: 554, text: '554 Nachricht als unerwünscht eingestuft' },
      'policy_block',
    ],
    [
      'smtp.near.traffic-limit',
      { channel: 'smtp', status: 451, text: '451 Recipients per session: limit reached' },
      'throttled',
    ],
    [
      'smtp.block-4xx',
      { channel: 'smtp', status: 450, text: '450 Your network is blocked for now' },
      'reputation_deferral',
    ],
    ['smtp.mailbox-full-code', { channel: 'smtp', status: 552, text: '552 5.2.2 Over the top' }, 'mailbox_full'],
    // The same readings of an ESP API's answer.
    ['http.near.volume', { channel: 'http', status: 400, text: 'Too many emails in a short time' }, 'throttled'],
    [
      'http.near.window-limit',
      { channel: 'http', status: 400, text: 'You have reached the monthly limit of your plan' },
      'quota_exhausted',
    ],
    ['http.near.recipient', { channel: 'http', status: 422, text: 'Recipient address is invalid' }, 'bad_recipient'],
  ];

  it.each(synthetic)('reaches %s (synthetic reply)', (rule, reply, family) => {
    expect(classifyReply(reply, NOW)).toMatchObject({ rule, family });
  });

  it('has no dead row: every rule is reached by a published reply (fixtures, corpus) or a synthetic one', () => {
    const reached = new Set([
      ...REPLIES.map((f) => classifyReply(f.reply, NOW).rule),
      ...loadCorpus().map((e) => classifyReply(replyOf(e), NOW).rule),
      ...synthetic.map(([rule]) => rule),
    ]);
    expect(RULES.map((r) => r.id).filter((id) => !reached.has(id))).toEqual([]);
  });

  it('treats a reply nothing matches as temporary unknown', () => {
    const c = classifyReply({ channel: 'smtp', status: 599, text: '599 something new' }, NOW);
    expect(c).toMatchObject({ family: 'unknown', permanent: false, suppress: false, rule: 'fallback.unknown' });
  });
});

describe('no response at all', () => {
  it('is a transient system failure, for either channel', () => {
    for (const channel of ['smtp', 'http'] as const) {
      const c = classifyReply({ channel, status: 0, text: 'Connection closed unexpectedly' }, NOW);
      expect(c).toMatchObject({
        family: 'transient_system',
        permanent: false,
        suppress: false,
        rule: 'net.no-response',
      });
      expect(c.scope).toBeUndefined();
    }
  });
});

describe('multi-line SMTP replies', () => {
  // Gmail's published 450 4.2.1 text, wrapped the way Gmail wraps it, with the wording
  // this rule needs ("rate that prevents") split across two lines.
  const text = [
    '450-4.2.1 The user you are trying to contact is receiving mail at a rate that',
    '450-4.2.1 prevents additional messages from being delivered. Please resend your',
    '450 4.2.1 message at a later time.',
  ].join('\n');

  it('drops every basic code and the repeated enhanced code', () => {
    expect(normaliseReplyText({ channel: 'smtp', text })).toBe(
      '4.2.1 The user you are trying to contact is receiving mail at a rate that prevents additional messages from being delivered. Please resend your message at a later time',
    );
  });

  it('classifies on the joined text', () => {
    const c = classifyReply({ channel: 'smtp', status: 450, text }, NOW);
    expect(c).toMatchObject({
      family: 'throttled',
      scope: 'recipient',
      enhanced: '4.2.1',
      rule: 'smtp.recipient-rate',
    });
  });

  it('keeps CRLF replies the same', () => {
    expect(normaliseReplyText({ channel: 'smtp', text: text.replace(/\n/g, '\r\n') })).toBe(
      normaliseReplyText({ channel: 'smtp', text }),
    );
  });

  it('reads a quoted reply without its quote, and finds no enhanced code in the quoting host’s address', () => {
    const quoted =
      'host mx.example.net[5.1.1.9] said: 550 5.7.1 <bob@example.net>: Recipient address rejected: Access denied (in reply to RCPT TO command)';
    expect(normaliseReplyText({ channel: 'smtp', text: quoted })).toBe(
      '5.7.1 <bob@example.net>: Recipient address rejected: Access denied',
    );
    expect(classifyReply({ channel: 'smtp', status: 550, text: quoted }, NOW)).toMatchObject({ enhanced: '5.7.1' });
    expect(normaliseReplyText({ channel: 'smtp', text: 'smtp; 550 Mailbox unavailable or access denied' })).toBe(
      'Mailbox unavailable or access denied',
    );
  });

  it('reads a non-delivery report’s diagnostic by the reply it quotes, not by the reporting product’s name', () => {
    // Barracuda's "X-Spam-&-Virus-Firewall" is a name: read as words, it was a spam verdict or a virus.
    const barracuda =
      '#< #5.0.0 X-Spam-&-Virus-Firewall; host[] said: 550 5.1.1 User unknown (in reply to RCPT TO command)> #SMTP#';
    expect(classifyReply({ channel: 'smtp', status: 550, text: barracuda }, NOW)).toMatchObject({
      family: 'bad_recipient',
      enhanced: '5.1.1',
    });
    const exchange =
      'mx.example.nl #<mx.example.nl #5.0.0 smtp; 556 Too many invalid recipient requests. Closing connection.> #SMTP#';
    expect(normaliseReplyText({ channel: 'smtp', text: exchange })).toBe(
      'Too many invalid recipient requests. Closing connection',
    );
  });

  it('reads a typographic apostrophe as a plain one', () => {
    expect(normaliseReplyText({ channel: 'http', text: 'This user doesn\u2019t exist' })).toBe(
      "This user doesn't exist",
    );
    expect(
      classifyReply({ channel: 'smtp', status: 550, text: '550 This user doesn\u2019t exist' }, NOW),
    ).toMatchObject({
      family: 'bad_recipient',
    });
  });
});

describe('retry hints', () => {
  const throttled = (
    headers: Record<string, string>,
    text = '{"errors":[{"field":null,"message":"too many requests"}]}',
    status = 429,
  ): Reply => ({
    channel: 'http',
    status,
    text,
    headers,
  });

  it('reads Retry-After in seconds', () => {
    expect(classifyReply(throttled({ 'retry-after': '120' }), NOW).retryAfterMs).toBe(120_000);
  });

  it('reads Retry-After as an HTTP-date, relative to now', () => {
    const at = new Date(NOW + 45_000).toUTCString();
    expect(classifyReply(throttled({ 'retry-after': at }), NOW).retryAfterMs).toBe(45_000);
  });

  it('reads X-RateLimit-Reset (unix seconds) once the budget is spent', () => {
    const reset = String(NOW / 1000 + 7);
    expect(classifyReply(throttled({ 'x-ratelimit-reset': reset }), NOW).retryAfterMs).toBe(7_000);
    expect(
      classifyReply(throttled({ 'x-ratelimit-reset': reset, 'x-ratelimit-remaining': '0' }, 'Bad Request', 400), NOW)
        .retryAfterMs,
    ).toBe(7_000);
    // SendGrid sends the headers on every answer: with budget left they say nothing.
    expect(
      classifyReply(throttled({ 'x-ratelimit-reset': reset, 'x-ratelimit-remaining': '12' }, 'Bad Request', 400), NOW)
        .retryAfterMs,
    ).toBeUndefined();
  });

  it('reads x-amz-retry-after in milliseconds, before the others', () => {
    expect(classifyReply(throttled({ 'x-amz-retry-after': '1500', 'retry-after': '60' }), NOW).retryAfterMs).toBe(
      1_500,
    );
  });

  it('reads "try again in 5 minutes" and its kin in the text', () => {
    const smtp = (text: string): Reply => ({ channel: 'smtp', status: 451, text });
    expect(classifyReply(smtp('451 4.7.1 Rate limit exceeded, try again in 5 minutes'), NOW).retryAfterMs).toBe(
      300_000,
    );
    expect(classifyReply(smtp('451 Too many connections, retry in 30 secs'), NOW).retryAfterMs).toBe(30_000);
    expect(classifyReply(smtp('450 Slow down: wait 2 hours'), NOW).retryAfterMs).toBe(7_200_000);
  });

  it('clamps to [0, 24 h] and is absent when there is no hint', () => {
    expect(classifyReply(throttled({ 'retry-after': '999999' }), NOW).retryAfterMs).toBe(MAX_HINT_MS);
    expect(classifyReply(throttled({ 'retry-after': new Date(NOW - 60_000).toUTCString() }), NOW).retryAfterMs).toBe(0);
    expect(classifyReply(throttled({}), NOW).retryAfterMs).toBeUndefined();
    expect(classifyReply(throttled({ 'retry-after': 'soon' }), NOW).retryAfterMs).toBeUndefined();
  });
});

describe('the facts an outcome carries forward', () => {
  it('the enhanced code found in an SMTP reply, never digits in an HTTP body', () => {
    expect(
      classifyReply({ channel: 'smtp', status: 554, text: '554 5.7.1 blocked using zen.spamhaus.org' }).enhanced,
    ).toBe('5.7.1');
    expect(classifyReply({ channel: 'smtp', status: 550, text: '550 mailbox unavailable' }).enhanced).toBeUndefined();
    expect(classifyReply({ channel: 'http', status: 400, text: 'version 5.1.1 of the API' }).enhanced).toBeUndefined();
  });

  it('no enhanced code in a section number: a line too long is content, not "4.5.3 too many recipients"', () => {
    // Apache James and aiosmtpd cite RFC sections; read as 4.5.3 they were throttles, retried forever.
    for (const text of [
      '500 Line length exceeded. See RFC 2821 #4.5.3.1.',
      '500 Line too long (see RFC5321 4.5.3.1.6)',
    ]) {
      const got = classifyReply({ channel: 'smtp', status: 500, text });
      expect(got.enhanced, text).toBeUndefined();
      expect(got.family, text).toBe('content_rejected');
    }
    // qmail's "(#5.1.1)" is still its enhanced code.
    expect(
      classifyReply({ channel: 'smtp', status: 550, text: '550 sorry, no mailbox here by that name (#5.1.1 - chkusr)' })
        .enhanced,
    ).toBe('5.1.1');
  });

  it('a sender whitelisted by the recipient is no listing: the pool is not blocked for it', () => {
    // Courier splits a transaction when one recipient whitelists the sender ("listed by" inside "whitelisted by").
    const split = classifyReply({
      channel: 'smtp',
      status: 412,
      text: '412 You are whitelisted by this recipient, please try again later.',
    });
    expect(split).toMatchObject({ family: 'transient_system', permanent: false });
    expect(split.scope).toBeUndefined();
    expect(
      classifyReply({ channel: 'smtp', status: 550, text: '550 5.7.1 Your IP is listed by bl.example.net' }),
    ).toMatchObject({ family: 'policy_block', scope: 'pool' });
  });

  it('whether the provider answered: not when nothing came back or its server failed (HTTP 5xx)', () => {
    expect(classifyReply({ channel: 'http', status: 0, text: 'ECONNREFUSED' }).answered).toBe(false);
    expect(classifyReply({ channel: 'smtp', status: 0, text: 'ETIMEDOUT' }).answered).toBe(false);
    expect(classifyReply({ channel: 'http', status: 503, text: 'Service Unavailable' }).answered).toBe(false);
    expect(classifyReply({ channel: 'http', status: 429, text: 'Too Many Requests' }).answered).toBe(true);
    // An SMTP relay's 4xx is a receiver's answer relayed: it says nothing about the relay.
    expect(classifyReply({ channel: 'smtp', status: 451, text: '451 4.3.0 temporary failure' }).answered).toBe(true);
  });
});

describe('a reply that says whether it is final (text over code)', () => {
  const smtp = (status: number, text: string): Reply => ({ channel: 'smtp', status, text });
  it('reads a permanent verdict that says it is for now as its temporary counterpart', () => {
    expect(classifyReply(smtp(554, '554 Message rejected as spam, please try again later'), NOW)).toMatchObject({
      family: 'reputation_deferral',
      permanent: false,
      rule: 'smtp.sender-cause-5xx.not-final',
    });
    expect(
      classifyReply(smtp(550, '550 Delivery of your message has been postponed: mailbox full'), NOW),
    ).toMatchObject({ family: 'mailbox_temporary', permanent: false });
  });
  it('keeps it final when it says so too, or when a full mailbox only advises trying later', () => {
    expect(
      classifyReply(smtp(550, '550 5.7.1 Blocked. This is a permanent error, please do not retry'), NOW),
    ).toMatchObject({ family: 'policy_block', permanent: true });
    expect(
      classifyReply(smtp(550, '550 5.1.1 User unknown, permanent failure; do not try again later'), NOW),
    ).toMatchObject({ family: 'bad_recipient', permanent: true, suppress: true });
    expect(
      classifyReply(
        smtp(552, '552 5.2.2 The recipient mailbox is full. Try resending later, or contact the recipient'),
        NOW,
      ),
    ).toMatchObject({ family: 'mailbox_full', permanent: true });
  });
});

describe('never suppressing on a guess', () => {
  it('reads a bad address said with a verdict on the sender as a block, and keeps the address', () => {
    const smtp = (status: number, text: string): Reply => ({ channel: 'smtp', status, text });
    expect(classifyReply(smtp(550, '550 5.1.1 Mailbox not allowed to receive mails from you'), NOW)).toMatchObject({
      family: 'policy_block',
      permanent: true,
      suppress: false,
      rule: 'smtp.bad-mailbox-code.sender-named',
    });
    expect(classifyReply(smtp(550, '550 5.1.1 <bob@example.net>: User unknown'), NOW)).toMatchObject({
      family: 'bad_recipient',
      suppress: true,
    });
  });
});

describe('volume first, whatever row matched', () => {
  const smtp = (status: number, text: string): Reply => ({ channel: 'smtp', status, text });
  it('reads a count limit over a window as that limit, not as the verdict its codes suggest', () => {
    expect(
      classifyReply(smtp(550, '550 5.1.1 Recipient rejected: recipient limit of your plan reached'), NOW),
    ).toMatchObject({
      family: 'quota_exhausted',
      permanent: false,
      suppress: false,
      rule: 'smtp.bad-mailbox-code.limit',
    });
  });
  it('leaves a mailbox’s storage, a message’s size and a verdict on the sender alone', () => {
    expect(classifyReply(smtp(552, '552 5.2.2 Mailbox quota exceeded'), NOW)).toMatchObject({ family: 'mailbox_full' });
    expect(classifyReply(smtp(552, '552 5.3.4 Message size limit exceeded'), NOW)).toMatchObject({
      family: 'content_rejected',
    });
    expect(
      classifyReply(smtp(550, '550 5.7.1 Recipient rejected: limit of spam complaints for your account reached'), NOW),
    ).toMatchObject({ family: 'policy_block', permanent: true });
  });
});

describe('rules of one receiver', () => {
  const qq: Reply = { channel: 'smtp', status: 550, text: '550 Mailbox unavailable or access denied' };

  it('apply to that receiver only: QQ’s receiving limit is a throttle there, and no verdict elsewhere', () => {
    expect(classifyReply({ ...qq, receiver: 'qq' }, NOW)).toMatchObject({ family: 'throttled', permanent: false });
    // From anyone else the wording does not decide: never a bad address on a guess.
    expect(classifyReply(qq, NOW)).toMatchObject({ family: 'unknown', permanent: false, suppress: false });
  });

  it('knows the receiver by the caller’s name, the answering host or a mark only it sends', () => {
    expect([...receiversOf({ ...qq, receiver: 'microsoft365' })]).toEqual(['microsoft']);
    expect([...receiversOf({ ...qq, host: 'gmail-smtp-in.l.google.com' })]).toEqual(['google']);
    expect([
      ...receiversOf({
        channel: 'smtp',
        status: 451,
        text: '451 Invalid Recipient - https://community.mimecast.com/docs/DOC-1369#451',
      }),
    ]).toEqual(['mimecast']);
    expect(receiversOf(qq).size).toBe(0);
    // A recipient's address is no mark: Yahoo's rules are not read for a Google reply about one.
    expect([...receiversOf({ ...qq, text: '550 5.1.1 <bob@yahoo.com> user unknown - gsmtp' })]).toEqual(['google']);
  });

  it('knows each organisation with a set of its own by its MX hosts or its codes', () => {
    const byHost: Readonly<Record<string, string>> = {
      'mx1a1.comcast.net': 'comcast',
      'al-ip4-mx-vip1.prodigy.net': 'att',
      'mx03.t-online.de': 't-online',
      'mxs.mail.ru': 'mailru',
      'mx.mnd.mail.iss.as9143.net': 'ziggo',
      'd241253a.ess.barracudanetworks.com': 'barracuda',
      'mx1.acme.iphmx.com': 'ironport',
      'mxa-0095a102.gslb.pphosted.com': 'proofpoint',
      'cluster1.eu.messagelabs.com': 'symantec',
      'mfsmax.docomo.ne.jp': 'docomo',
    };
    for (const [host, name] of Object.entries(byHost)) expect([...receiversOf({ ...qq, host })], host).toEqual([name]);
    const byMark: Readonly<Record<string, string>> = {
      '550 5.7.1 [CS01] Message rejected due to local policy.': 'apple',
      '421 4.2.0 Throttled RL000001': 'comcast',
      '553 5.3.0 flph829 DNSBL:ATTRBL 521< 192.0.2.1 >_is_blocked': 'att',
      '554 IP=192.0.2.1 - Dialup/transient IP not allowed. (DIAL)': 't-online',
      '550 Blocked by spam statistics': 'yandex',
      '550 mx10.tb.mail.iss.as9143.net MXIN103 Your IP [192.0.2.1] is in RBL.': 'ziggo',
      '550 5.7.1 blocked using Barracuda Reputation': 'barracuda',
      '550 Service unavailable; Client host [192.0.2.1] blocked using Trend Micro RBL+.': 'trendmicro',
    };
    for (const [text, name] of Object.entries(byMark)) expect([...receiversOf({ ...qq, text })], text).toEqual([name]);
    // Their addresses are no marks.
    expect(receiversOf({ ...qq, text: '550 5.1.1 <bob@comcast.net>: user unknown' }).size).toBe(0);
  });

  it('act on what the organisation’s own code says: its listings of our IP are about the pool', () => {
    const smtp = (status: number, text: string): Reply => ({ channel: 'smtp', status, text });
    expect(classifyReply(smtp(554, '554 5.7.1 BL000001'), NOW)).toMatchObject({
      family: 'policy_block',
      scope: 'pool',
      rule: 'comcast.listed',
    });
    expect(classifyReply(smtp(451, '451 4.2.0 Throttled - #RL000001'), NOW)).toMatchObject({
      family: 'throttled',
      scope: 'receiver',
      rule: 'comcast.rate',
    });
    expect(
      classifyReply(
        smtp(554, "554 Your access to this mail system has been rejected due to the sending MTA's poor reputation."),
        NOW,
      ),
    ).toMatchObject({ family: 'policy_block', scope: 'pool', rule: 'ironport.poor-reputation' });
    // Ziggo's code alone says the listing.
    expect(classifyReply(smtp(550, '550 mx10.tb.mail.iss.as9143.net MXIN103 ;id=x;mta=mx10.tb'), NOW)).toMatchObject({
      family: 'policy_block',
      scope: 'pool',
      rule: 'ziggo.rbl',
    });
    // Under a 4xx the same listing defers, still about the pool.
    expect(classifyReply(smtp(452, '452 found on one or more DNSBLs, see #BL000010'), NOW)).toMatchObject({
      family: 'reputation_deferral',
      scope: 'pool',
      permanent: false,
    });
  });

  it('every rule names where it was learned, and every set belongs to a known organisation', () => {
    for (const rule of [...RULES]) expect(rule.source.length, rule.id).toBeGreaterThan(8);
    for (const [receiver, rules] of Object.entries(RECEIVER_RULES)) {
      for (const rule of rules) expect(rule.id.split('.')[0], rule.id).toBe(receiver);
    }
  });
});

describe('what a reply is about (scope)', () => {
  const smtp = (status: number, text: string): Reply => ({ channel: 'smtp', status, text });
  it('one recipient receiving too fast: a throttle of that recipient, not of its receiver', () => {
    expect(
      classifyReply(
        smtp(
          450,
          '450 4.2.1 The user you are trying to contact is receiving mail at a rate that prevents additional messages from being delivered.',
        ),
        NOW,
      ),
    ).toMatchObject({ family: 'throttled', scope: 'recipient', permanent: false });
  });
  it('our IPs on a block list: the pool, refused (5xx) or deferred (4xx)', () => {
    expect(
      classifyReply(
        smtp(554, '554 5.7.1 Service unavailable; Client host [203.0.113.5] blocked using zen.spamhaus.org'),
        NOW,
      ),
    ).toMatchObject({
      family: 'policy_block',
      scope: 'pool',
      suppress: false,
    });
    expect(
      classifyReply(smtp(450, '450 4.7.1 Client host [203.0.113.5] blocked using bl.spamcop.net'), NOW),
    ).toMatchObject({
      family: 'reputation_deferral',
      scope: 'pool',
      permanent: false,
    });
  });
  it('a receiver’s rate stays the receiver’s', () => {
    expect(
      classifyReply(smtp(421, '421 4.7.28 Our system has detected an unusual rate of unsolicited mail - gsmtp'), NOW),
    ).toMatchObject({ family: 'throttled', scope: 'receiver' });
  });
  it('too many connections at once is about the receiver’s connections, not its rate', () => {
    for (const text of [
      '421 4.7.0 Error: too many connections from 203.0.113.5',
      '421 4.3.2 The maximum number of concurrent connections per resource forest has exceeded a limit, closing transmission channel.',
      '421 Too many concurrent SMTP connections from this IP address; please try again later.',
    ]) {
      expect(classifyReply(smtp(421, text), NOW), text).toMatchObject({ family: 'throttled', scope: 'connections' });
    }
  });
});

describe('the second reading (words near each other)', () => {
  const smtp = (text: string) => classifyReply({ channel: 'smtp', status: Number(text.slice(0, 3)), text }, NOW);

  it('reads wording no phrase row names, in either order and other scripts', () => {
    expect(smtp('550 Пользователь не найден')).toMatchObject({ family: 'bad_recipient', suppress: true });
    expect(smtp('550 Unbekannter Empfänger')).toMatchObject({ family: 'bad_recipient', rule: 'smtp.near.recipient' });
    expect(smtp('550 The e-mail account you tried to reach was deleted')).toMatchObject({ family: 'bad_recipient' });
    expect(smtp('552 Boîte du destinataire pleine')).toMatchObject({ family: 'mailbox_full', suppress: false });
    expect(smtp('550 Attachment too big for this server')).toMatchObject({ family: 'content_rejected' });
  });

  it('keeps the 4xx invariant: a deferral about the address or the mailbox is retried', () => {
    expect(smtp('450 Empfänger unbekannt')).toMatchObject({ family: 'mailbox_temporary', permanent: false });
    expect(smtp('452 Postfach des Benutzers ist voll')).toMatchObject({ family: 'mailbox_temporary' });
  });

  it('never turns the sender, a choice of causes or a sending quota into a verdict on the recipient', () => {
    expect(smtp('550 Sender address unknown')).not.toMatchObject({ family: 'bad_recipient' });
    expect(smtp('550 Destinatario desconocido o mailbox lleno')).toMatchObject({ family: 'unknown' });
    expect(smtp('550 Your outgoing quota is exceeded')).not.toMatchObject({ family: 'mailbox_full' });
  });

  it("reads the recipient's domain, our login, a scanner in trouble and a header, never the sender's domain as the recipient's", () => {
    expect(smtp('550 Domaine du destinataire inexistant')).toMatchObject({ family: 'bad_domain', suppress: true });
    expect(smtp('550 Sender domain does not exist')).not.toMatchObject({ family: 'bad_domain' });
    expect(smtp('451 Domain not found')).toMatchObject({ family: 'unknown', permanent: false });
    expect(smtp('550 SMTP-Authentifizierung erforderlich')).toMatchObject({ family: 'sender_config' });
    expect(smtp('550 Authentication failed: DKIM signature invalid')).not.toMatchObject({ family: 'sender_config' });
    expect(smtp('550 Virus scanner not responding')).toMatchObject({ family: 'transient_system', permanent: false });
    expect(smtp('554 Virus found: Eicar-Test-Signature')).toMatchObject({ family: 'content_rejected' });
    expect(smtp('554 Date header missing')).toMatchObject({ family: 'content_rejected' });
  });

  it('reads a refusal or a temporary word in other languages', () => {
    expect(smtp('550 Nachricht abgelehnt')).toMatchObject({ family: 'policy_block' });
    expect(smtp('550 Servizio temporaneamente non disponibile')).toMatchObject({ family: 'transient_system' });
    expect(smtp('550 服务器繁忙')).toMatchObject({ family: 'transient_system' });
    expect(smtp('554 Сообщение отклонено как спам')).toMatchObject({ family: 'policy_block' });
  });

  it('reads a limit of size or a count of bad addresses as what it is, not volume', () => {
    expect(smtp('552 Message size exceeds fixed limit')).toMatchObject({ family: 'content_rejected' });
    expect(smtp('550 Too many invalid recipients')).not.toMatchObject({ family: 'throttled' });
  });
});
