import type { ReplyRule } from './reply-types.js';

/**
 * Receivers' own rule sets (issue 15), keyed by the receiving organisation: wording and codes
 * that mean something particular from that organisation (its code tables, its words for a limit).
 * A set is read only for a reply from its organisation, before the general rows' volume,
 * sender and mailbox wording (`reply-rules.ts`). An organisation is named as `packages/core`'s
 * organisations name them; `classify.ts` finds it from the caller, the answering host or
 * {@link RECEIVER_MARKS}. Each rule names where it was learned (`source`).
 */

/** Slugs that name an organisation by another name (the corpus's, a caller's). */
export const RECEIVER_ALIASES: Readonly<Record<string, string>> = {
  microsoft365: 'microsoft',
  exchange_online: 'microsoft',
  outlook: 'microsoft',
  hotmail: 'microsoft',
  aol: 'yahoo',
  gmail: 'google',
  icloud: 'apple',
  laposte: 'orange',
  webde: 'gmx',
  'web.de': 'gmx',
  ionos: 'gmx',
  spectrum: 'charter',
  xfinity: 'comcast',
  sbcglobal: 'att',
  bellsouth: 'att',
  telekom: 't-online',
  'mail.ru': 'mailru',
  proton: 'protonmail',
  cisco: 'ironport',
  messagelabs: 'symantec',
  broadcom: 'symantec',
};

/**
 * Marks in a reply's text that only one organisation sends: its code tables and its own host
 * names, never a domain that could be a recipient's address. A reply may carry the marks of
 * more than one (a receiver quoting another's answer): each one's set is read.
 */
export const RECEIVER_MARKS: Readonly<Record<string, RegExp>> = {
  google: /\bgsmtp\b|support\.google\.com/i,
  microsoft:
    /protection\.outlook\.com|\.outlook\.com\b|\bSTOREDRV\b|\bRESOLVER\.[A-Z]+|\bNonExistentDomain\b|InfoDomainNonexistent|\(S\d{4,5}\)|aka\.ms\//i,
  yahoo:
    /yahoodns|\[(?:TSS?|GL|BL|PH)\d\d\]|temporarily deferred - 4\.16\.5\d|\b(?:RTR|RLY|DYN|HVU|CON):[A-Z0-9]{2}\b|^Message not allowed - \[\d+\]$|postmaster\.(?:yahooinc|aol)\.com/i,
  qq: /service\.(?:exmail\.|mail\.)?qq\.com/i,
  mimecast: /mimecast/i,
  netease: /\b(?:DT|MI|HL|RP|WM):[A-Z]{3}\b|help\.163\.com|\bmxmail\.netease\.com/,
  charter: /AUP#[-A-Za-z]*1\d{3}\b|spectrum\.net\/support/i,
  cox: /AUP#CX[A-Z]+/i,
  godaddy: /\bIB\d{3}\b|secureserver\.net/i,
  orange: /\b(?:OFR|LPN)\d{3}_\d{3}\b|\bmwinf\w+|wanadoo|\bme\.orange\.fr/i,
  gmx: /\bgmx\.(?:net|de|com)\b|web\.de\b|kundenserver\.de|\bionos\.|\(header based\)|[?&]c=h[id]\b/i,
  aliyun: /aliyun|alibaba|mxhichina/i,
  vade: /vadesecure|\bOXSUS\d+/i,
  sophos: /\bXGEMAIL_\d{4}\b|\.hydra\.sophos\.com/i,
  apple:
    /\[(?:CS|HM|BS)0\d\]|\[HME\d\]|\[HCM\d\]|support\.apple\.com\/(?:en-us\/)?(?:HT204137|102322)|\.mail\.icloud\.com\b|-smtpin\d+\.me\.com\b/i,
  comcast: /\b(?:ES|BL|RL|DM)\d{6}\b|postmaster\.comcast\.net|\.(?:sys|mail)\.comcast\.net\b/,
  att: /abuse-att\.net|\brbl\.att\.net|att\.net\/blocks|mailrelay\.att\.net|dc=bellsouth|\bDNSBL:ATT|\b(?:al|fl)p[a-z]\d{3}\b/i,
  't-online': /\brx\.t-online\.de\b|\((?:NOWL|DIAL)\)/i,
  yandex:
    /Blocked by spam statistics|\bya\.cc\/|feedback\.yandex\.ru|help\.yandex\.(?:ru|com)|\.mail\.yandex\.net\b|rejected under suspicion of SPAM/i,
  ziggo: /\.iss\.as9143\.net\b|\bMXIN\d{3}\b/i,
  mailru: /help\.mail\.ru|corp\.mail\.ru|win\.mail\.ru|postmaster\.mail\.ru|\bmxs\.mail\.ru\b/i,
  free: /postmaster\.free\.fr|\(UserSearch\)|\bmx\d\.free\.fr\b/i,
  zoho: /detected by Zoho Mail|,\s*mx\.zoho\.(?:com|eu|in)\b|zoho\.com\/mail\/help|\bsmtpin\.zoho\.com\b/i,
  fastmail: /messagingengine\.com|fastmail\.help/i,
  protonmail: /\bmail(?:sec)?\.protonmail\.ch\b|proton\.me\/support/i,
  proofpoint:
    /(?:support|prs|ipcheck)\.proofpoint\.com|Proofpoint (?:Dynamic )?Reputation|\.pphosted\.com\b|\.ppe-hosted\.com\b/i,
  barracuda: /barracuda|\bcuda_nsu\b/i,
  ironport: /\.iphmx\.com\b|\.etd\.cisco\.com\b|sending MTA's poor reputation/i,
  trendmicro:
    /Trend Micro|rbl-plus\.mail-abuse\.org|mail-abuse\.com\/cgi-bin|\btrendmicro\.(?:com|eu)\b|ERS-Customized-Block|BLOCK-SEND-ER|\(ERS\)/i,
  symantec: /messagelabs\.com|symanteccloud\.com|TECH246726/i,
  hornetsecurity: /antispameurope|hornetsecurity/i,
  cloudflare: /developers\.cloudflare\.com\/email-routing|\.mx\.cloudflare\.net\b/i,
};

/** One rule of an organisation's set: the set names its organisation. */
export type ReceiverRule = Omit<ReplyRule, 'receiver'>;

// One row a line, so each set reads as a table.
// prettier-ignore
/** Every organisation's own rules. Bump `CLASSIFIER_VERSION` with any change. */
export const RECEIVER_RULES: Readonly<Record<string, readonly ReceiverRule[]>> = {
  google: [
    // Gmail's 4.7.28 is its volume limit whatever else the text says (decision order 1).
    { id: 'google.rate-4.7.28', channel: 'smtp', enhanced: /^4\.7\.28$/, family: 'throttled', permanent: false, scope: 'receiver', source: 'https://support.google.com/a/answer/3726730 (421 4.7.28); azumakuniyuki/feb-2024-no-auth-no-entry (Google SMTP error page snapshots)' },
    // Our connection without TLS, refused as 5xx: our own setting (decision order 4); as 4xx Gmail rate-limits it (a reputation deferral).
    { id: 'google.tls-required', channel: 'smtp', status: [500, 599], text: /(?:wasn't|was not) sent over a TLS connection/i, family: 'sender_config', permanent: false, source: 'https://support.google.com/a/answer/3726730 (550 5.7.29)' },
    // Gmail as our relay: its sending limits are our account's quota, not a mailbox's.
    { id: 'google.sending-quota', channel: 'smtp', text: /\bemail quota exceeded|(?:daily )?user sending (?:quota|limit) exceeded/i, family: 'quota_exhausted', permanent: false, scope: 'provider', source: 'https://support.google.com/a/answer/3726730 (550 5.4.5, 550 5.7.1 Email quota exceeded)' },
  ],
  netease: [
    // NetEase as our relay: the account we log in with may not send over SMTP.
    { id: 'netease.no-permission', channel: 'smtp', text: /^User has no permission$/i, family: 'sender_config', permanent: false, source: 'https://github.com/open-falcon/mail-provider/issues/6 (550 User has no permission: SMTP not enabled for the 163 account)' },
    // NetEase (163/126): http://help.163.com/09/1224/17/5RAJ4LMH00753VB8.html
    { id: 'netease.quota', channel: 'smtp', text: /\b(?:MI:STC|RP:TRC)\b/, family: 'quota_exhausted', permanent: false, scope: 'receiver', source: 'http://help.163.com/09/1224/17/5RAJ4LMH00753VB8.html' },
    { id: 'netease.connections', channel: 'smtp', text: /\bHL:ICC\b/, family: 'throttled', permanent: false, scope: 'connections', source: 'http://help.163.com/09/1224/17/5RAJ4LMH00753VB8.html' },
    { id: 'netease.rate', channel: 'smtp', text: /\b(?:HL:IFC|MI:DMC|RP:DRC|MI:SFQ|RP:QRC|RP:RCL)\b/, family: 'throttled', permanent: false, scope: 'receiver', source: 'http://help.163.com/09/1224/17/5RAJ4LMH00753VB8.html' },
    { id: 'netease.reputation-4xx', channel: 'smtp', status: [400, 499], text: /\b(?:HL:[MR]EP|DT:RBL|WM:BL[IU]|DT:SPM)\b/, family: 'reputation_deferral', permanent: false, scope: 'receiver', source: 'http://help.163.com/09/1224/17/5RAJ4LMH00753VB8.html' },
    { id: 'netease.unknown', channel: 'smtp', text: /\bMI:C[CE]L\b/, family: 'unknown', permanent: false, source: 'http://help.163.com/09/1224/17/5RAJ4LMH00753VB8.html' },
    { id: 'netease.block', channel: 'smtp', status: [500, 599], text: /\b(?:DT|MI|HL|RP|WM):[A-Z]{3}\b/, family: 'policy_block', permanent: true, source: 'http://help.163.com/09/1224/17/5RAJ4LMH00753VB8.html' },
  ],
  qq: [
    // QQ's check of the sender's domain (its DNS), not the recipient's.
    { id: 'qq.sender-domain', channel: 'smtp', text: /Domain may not exist or DNS check failed/i, family: 'policy_block', permanent: true, source: 'find_string id 15468641575 (a list bounce from mx3.qq.com; set 19 of 2026-12-03)' },
    // QQ: "Mailbox unavailable or access denied" is its per-recipient receiving limit.
    { id: 'qq.recipient-rate', channel: 'smtp', text: /^Mailbox unavailable or access denied$/i, family: 'throttled', permanent: false, scope: 'recipient', source: 'github:ActiveCampaign/smtp-field-manual:data/codes/550.json' },
  ],
  charter: [
    // Spectrum's AUP#I-<code> table (spectrumbusiness.net/support/internet/understanding-email-error-codes, as sisimai's rhost/spectrum.rb records it).
    { id: 'charter.connections', channel: 'smtp', text: /AUP#[-A-Za-z]*13[0-4]\d\b/, family: 'throttled', permanent: false, scope: 'connections', source: 'github:sisimai/rb-sisimai:lib/sisimai/rhost/spectrum.rb (1300-1340: concurrent connections)' },
    { id: 'charter.rate', channel: 'smtp', text: /AUP#[-A-Za-z]*1(?:3[5-9]\d|4\d\d|54\d|55\d|58\d)\b|spectrum\.net\/support\/internet\/aup-blocked/i, family: 'throttled', permanent: false, scope: 'receiver', source: 'github:sisimai/rb-sisimai:lib/sisimai/rhost/spectrum.rb (1350-1490, 1540-1580: messages, recipients, session); https://www.spamresource.com/2019/10/charterroadrunner-bounces.html' },
    { id: 'charter.listed', channel: 'smtp', text: /AUP#[-A-Za-z]*12[0-5]\d\b/, family: 'policy_block', permanent: true, scope: 'pool', source: 'github:sisimai/rb-sisimai:lib/sisimai/rhost/spectrum.rb (1200-1250: Cloudmark CSI, Spamhaus)' },
    { id: 'charter.system', channel: 'smtp', text: /AUP#[-A-Za-z]*1(?:090|260)\b/, family: 'transient_system', permanent: false, source: 'github:sisimai/rb-sisimai:lib/sisimai/rhost/spectrum.rb (1090: cannot be processed now; 1260: IPv6)' },
    { id: 'charter.size', channel: 'smtp', text: /AUP#[-A-Za-z]*1530\b/, family: 'content_rejected', permanent: true, source: 'github:sisimai/rb-sisimai:lib/sisimai/rhost/spectrum.rb (1530: over 20 MB)' },
    { id: 'charter.blocked', channel: 'smtp', text: /AUP#[-A-Za-z]*1(?:0[0-8]\d|1[0-9]\d|560)\b/, family: 'policy_block', permanent: true, source: 'github:sisimai/rb-sisimai:lib/sisimai/rhost/spectrum.rb (1000-1080 blocked, 1100-1150 no PTR, 1160-1190 policy, 1560 invalid recipients)' },
  ],
  cox: [
    { id: 'cox.connections', channel: 'smtp', text: /AUP#CXCNCT/i, family: 'throttled', permanent: false, scope: 'connections', source: 'https://forums.cox.com/discussions/internet/cox-has-marked-my-email-server-as-a-spammer---how-to-resolve/136978' },
  ],
  yahoo: [
    // Yahoo: TS01–TS02 complaints, TS03/TSS06+ permanent deferral, BL/PH policy.
    { id: 'yahoo.permanent-deferral', channel: 'smtp', text: /permanently deferred/i, family: 'policy_block', permanent: true, finalEvenAs4xx: true, source: 'github:sisimai/go-sisimai:rhost/for-yahooinc.go' },
    // Yahoo "4.16.50" is its reputation deferral (help.yahoo.com/help/us/mail/defer/defer-06.html).
    { id: 'yahoo.defer-4.16.50', channel: 'smtp', status: [400, 499], text: /temporarily deferred - 4\.16\.5\d/i, family: 'reputation_deferral', permanent: false, scope: 'receiver', source: 'http://blog.deliverability.com/2008/09/a-few-days-ago.html' },
    // AOL's documented refusal codes (postmaster.info.aol.com/errors): RTR, RLY, DYN, HVU, CON.
    { id: 'yahoo.aol-codes', channel: 'smtp', status: [500, 599], text: /\b(?:RTR|RLY|DYN|HVU|CON):[A-Z0-9]{2}\b/, family: 'policy_block', permanent: true, source: 'http://postmaster.info.aol.com/errors/' },
    // AOL's codes under a 4xx: the same causes, for now (postmaster.info.aol.com/errors/421dynt1.html).
    { id: 'yahoo.aol-codes-4xx', channel: 'smtp', status: [400, 499], text: /\b(?:RTR|RLY|DYN|HVU|CON):[A-Z0-9]{2}\b/, family: 'reputation_deferral', permanent: false, scope: 'receiver', source: 'http://postmaster.info.aol.com/errors/421dynt1.html; https://wordtothewise.com/2012/10/mail-problems-at-aol' },
    { id: 'yahoo.gl01', channel: 'smtp', status: [400, 499], text: /\[GL01\]/, family: 'reputation_deferral', permanent: false, scope: 'receiver', source: 'http://support.blackpearlmail.com/knowledgebase/articles/650530-bounce-messages' },
    { id: 'yahoo.bare-code', channel: 'smtp', text: /^Message not allowed - \[\d+\]$/i, family: 'unknown', permanent: false, source: 'github:ActiveCampaign/smtp-field-manual:data/codes/554.json' },
  ],
  aliyun: [
    // Alibaba Mail (Aliyun) and Vade speak their own words for limits and connections.
    { id: 'aliyun.local-sender', channel: 'smtp', text: /Mailfrom account is a local account/i, family: 'policy_block', permanent: true, source: 'http://bestwisewords.com/document_detail/36612.html' },
    { id: 'aliyun.rcpt-attempts', channel: 'smtp', text: /number of RCPT attempts is achieved the maximum threshold/i, family: 'quota_exhausted', permanent: false, source: 'http://bestwisewords.com/document_detail/36612.html' },
    { id: 'aliyun.rcpt-total', channel: 'smtp', text: /total of RCPTs is achieved the maximum threshold/i, family: 'throttled', permanent: false, scope: 'receiver', source: 'http://bestwisewords.com/document_detail/36612.html' },
    { id: 'aliyun.unavailable', channel: 'smtp', text: /"RCPT TO" mailbox unavailable/i, family: 'unknown', permanent: false, source: 'http://sh-aliyun.com/index.php/Products/detail/cid/0/pid/87.html' },
  ],
  vade: [
    // Vade (OX/Vade Secure postmaster): "Connection refused" under 4.2.1 is too many connections.
    { id: 'vade.connections', channel: 'smtp', status: [400, 499], text: /^4\.2\.1 Connection refused$/i, family: 'throttled', permanent: false, scope: 'connections', source: 'https://postmaster-oxsus.vadesecure.com/' },
    { id: 'vade.refused', channel: 'smtp', status: [500, 599], text: /Connection refused/i, family: 'policy_block', permanent: true, source: 'https://postmaster-oxsus.vadesecure.com/' },
    { id: 'vade.deferred', channel: 'smtp', text: /Connection deferred/i, family: 'transient_system', permanent: false, source: 'https://postmaster-oxsus.vadesecure.com/' },
  ],
  godaddy: [
    // GoDaddy IB codes: "temporarily blocked" (an hour) against "blocked for the day".
    { id: 'godaddy.temporary-block', channel: 'smtp', text: /(?:has been temporarily blocked|temporarily rejected)\b.*\bIB\d{3}\b/i, family: 'reputation_deferral', permanent: false, scope: 'receiver', source: 'github:fm/smtp-codes:data/codes/554.json' },
    { id: 'godaddy.day-block', channel: 'smtp', text: /blocked for the day/i, family: 'policy_block', permanent: true, source: 'github:fm/smtp-codes:data/codes/554.json' },
  ],
  orange: [
    // Orange / La Poste "Service refusé, veuillez essayer plus tard": the sender refused for now.
    { id: 'orange.refused-later', channel: 'smtp', text: /service refus(?:e|é)d?\b.*(?:try later|essayer plus tard)/i, unless: /OFR005_505|LPN007_505/, family: 'reputation_deferral', permanent: false, scope: 'receiver', source: 'github:sisimai/set-of-emails:maildir/bsd/rhost-franceptt-07.eml' },
    { id: 'orange.end-of-data', channel: 'smtp', text: /\b(?:OFR005_505|LPN007_505)\b/, family: 'transient_system', permanent: false, source: 'github:sisimai/set-of-emails:maildir/bsd/rhost-franceptt-08.eml' },
  ],
  gmx: [
    // GMX / web.de / IONOS policy cases: header checks are content, the rest policy.
    { id: 'gmx.header-policy', channel: 'smtp', status: [500, 599], text: /policy restrictions.*(?:\(header based\)|[?&]c=h[id]\b)/i, family: 'content_rejected', permanent: true, source: 'https://github.com/zammad/zammad/issues/4630' },
  ],
  mimecast: [
    // Mimecast defers an unknown internal user with 451 by default (its 451 "Invalid Recipient").
    { id: 'mimecast.invalid-recipient-4xx', channel: 'smtp', status: [400, 499], text: /invalid recipient/i, family: 'mailbox_temporary', permanent: false, source: 'github:ActiveCampaign/smtp-field-manual:data/codes/451.json' },
    { id: 'mimecast.internal-resource', channel: 'smtp', status: [400, 499], text: /internal resource (?:is )?temporarily unavailable/i, family: 'greylisted', permanent: false, source: 'https://community.mimecast.com/s/article/Mimecast-SMTP-Error-Codes-842605754' },
  ],
  microsoft: [
    // Its own reply to a HELO/EHLO argument it will not take, and its store's transient failures at the recipient's mailbox.
    { id: 'microsoft.helo-domain', channel: 'smtp', enhanced: /^5\.5\.4$/, text: /^5\.5\.4 Invalid domain name\b/i, family: 'policy_block', permanent: true, source: 'github:thomas-zahner/mailify:lib/src/heuristics.rs (a reply quoted with its outlook.com host; set 17 of 2026-12-03)' },
    { id: 'microsoft.store-deliver-4xx', channel: 'smtp', status: [400, 499], text: /\bSTOREDRV\.Deliver;.{0,40}\bmailbox\b/i, unless: /throttl/i, family: 'mailbox_temporary', permanent: false, source: 'github:evilashz/exchange-server-27065 (AckReason.cs)' },
    // Microsoft 365 5.4.1 "Recipient address rejected: Access denied": not in the tenant's directory.
    { id: 'microsoft.directory', channel: 'smtp', enhanced: /^5\.4\.1$/, text: /recipient address(?:es)? rejected ?: access denied/i, family: 'bad_recipient', permanent: true, source: 'github:sisimai/set-of-emails:maildir/bsd/lhost-mfilter-04.eml' },
    { id: 'microsoft.wrong-region', channel: 'smtp', text: /wrong Office 365 region/i, family: 'unknown', permanent: false, source: 'github:fm/smtp-codes:data/codes/451.json' },
    { id: 'microsoft.nonexistent-domain', channel: 'smtp', status: [500, 599], text: /NonExistentDomain|InfoDomainNonexistent/, family: 'bad_domain', permanent: true, source: 'github:crisp-oss/email-bounce-parser:test/fixtures/550_5_4_310_server_unknown.txt' },
    // Microsoft 4.7.500–4.7.899 "server busy / access denied, try later": its pacing (issue 15).
    { id: 'microsoft.busy', channel: 'smtp', enhanced: /^4\.7\.(?:5\d\d|8\d\d)/, text: /server busy|access denied, please try again later/i, family: 'throttled', permanent: false, scope: 'receiver', source: 'https://github.com/MicrosoftDocs/OfficeDocs-Exchange/issues/2499' },
  ],
  docomo: [
    // NTT docomo says "too much mail data" of a full mailbox; elsewhere it is a message over the size limit.
    // Read when the caller names docomo (its domain is a recipient's, so it is no mark).
    { id: 'docomo.mailbox-full', channel: 'smtp', text: /too much mail data/i, family: 'mailbox_full', permanent: true, source: 'github:sisimai/set-of-emails:maildir/err/make-test-03.eml' },
  ],
  apple: [
    // Apple's bracketed codes: HME1 failed SPF and DKIM; HCM1 our IP deferred; BS02 its own trouble; CS/HM/BS01 its local policy.
    { id: 'apple.authentication', channel: 'smtp', text: /\[HME\d\]/, family: 'policy_block', permanent: true, source: 'github:sisimai/go-sisimai:rhost/for-apple.go ([HME1] failing both SPF and DKIM)' },
    { id: 'apple.ip-deferred', channel: 'smtp', text: /\[HCM\d\]/, family: 'reputation_deferral', permanent: false, scope: 'receiver', source: 'github:KumoCorp/kumomta:assets/community/shaping.toml (421 [HCM1] Your mail from <ip> was deferred)' },
    { id: 'apple.server-error', channel: 'smtp', text: /\[BS02\]/, family: 'transient_system', permanent: false, source: 'github:KumoCorp/kumomta:assets/community/shaping.toml (451 [BS02] Temporary server error)' },
    { id: 'apple.local-policy', channel: 'smtp', text: /\[(?:CS|HM|BS)0\d\]/, family: 'policy_block', permanent: true, source: 'github:ActiveCampaign/smtp-field-manual:data/codes/550.json, 554.json ([CS01], [CS02], [HM08] Message rejected due to local policy)' },
  ],
  comcast: [
    // Comcast's code table (postmaster.comcast.net/mail-error-codes.html): RL rate limits, BL listings, ES dynamic space, DM DMARC.
    { id: 'comcast.rate', channel: 'smtp', text: /\bRL\d{6}\b/, family: 'throttled', permanent: false, scope: 'receiver', source: 'github:KumoCorp/kumomta:assets/policy-extras/shaping.toml (RL000010 "Domain Throttled", as Comcast gave it); https://postmaster.comcast.net/smtp-error-codes.php#RL000010' },
    { id: 'comcast.sessions', channel: 'smtp', text: /too many sessions opened/i, family: 'throttled', permanent: false, scope: 'connections', source: 'http://security.comcast.net/get-help/Mail-Delivery-Error-Messages.aspx (421 - [Too many sessions opened]: 25 connections per sending IP)' },
    { id: 'comcast.listed', channel: 'smtp', text: /\bBL000(?:001|010|011|100|101|110|111)\b/, family: 'policy_block', permanent: true, scope: 'pool', source: 'http://postmaster.comcast.net/mail-error-codes.html (BL000001–BL000111: listed on Spamhaus Zen, Cloudmark CSI, SenderScore)' },
    { id: 'comcast.spam-patterns', channel: 'smtp', text: /\bBL000000\b/, family: 'policy_block', permanent: true, source: 'http://postmaster.comcast.net/mail-error-codes.html (BL000000: mail in patterns characteristic of spam)' },
    { id: 'comcast.dynamic', channel: 'smtp', text: /\bES0000(?:01|10)\b/, family: 'policy_block', permanent: true, scope: 'pool', source: 'http://postmaster.comcast.net/mail-error-codes.html (ES000001, ES000010: from dynamic or residential space)' },
    { id: 'comcast.dmarc', channel: 'smtp', text: /\bDM\d{6}\b/, family: 'policy_block', permanent: true, source: 'github:ActiveCampaign/smtp-field-manual:data/codes/550.json (550 5.2.0 Message rejected due to DMARC … #DM000001)' },
  ],
  att: [
    // AT&T's own block lists (DNSBL:RBL, DNSBL:ATTRBL, sbc:blacklist, BellSouth's ldap rblmx) list our IP.
    { id: 'att.listed', channel: 'smtp', text: /\bDNSBL:(?:ATT)?R?BL\b|abuse_rbl@abuse-att\.net|\brbl\.att\.net\b|att\.net\/blocks|blacklist\.mailrelay\.att\.net|ldap:ou=rblmx/i, family: 'policy_block', permanent: true, scope: 'pool', source: 'http://rbl.att.net/block_enduser.html; https://github.com/sisimai/p5-sisimai/issues/175 (DNSBL:ATTBL)' },
    { id: 'att.unknown-source', channel: 'smtp', text: /unauthorized interface for|Blocked for status:/i, family: 'policy_block', permanent: true, source: 'http://rbl.att.net/block_enduser.html (550 unauthorized interface; 550 Error. Blocked for status)' },
  ],
  't-online': [
    // Telekom refuses by our IP: (NOWL) none or bad reputation, (DIAL) a dial-up address, (BL) listed; each until reset on request.
    { id: 't-online.ip', channel: 'smtp', text: /\((?:NOWL|DIAL|BL)\)|None\/bad reputation|Dialup\/transient IP not allowed/i, family: 'policy_block', permanent: true, scope: 'pool', source: 'https://bllmnn.de/2024/05/fehler-554-none-bad-reputation-beim-mailversand-an-t-online-de; https://timmehosting.de/leitfaden-wenn-t-online-e-mails-blockiert-ursachen-und-loesungen' },
  ],
  yandex: [
    // Yandex's own table (yandex.com/support/mail/bounces/yandex.html): spam statistics block the sending host for 24 hours.
    { id: 'yandex.spam-statistics', channel: 'smtp', text: /Blocked by spam statistics/i, family: 'policy_block', permanent: true, scope: 'pool', source: 'https://www.yandex.com/support/mail/bounces/yandex.html (Blocked by spam statistics)' },
    { id: 'yandex.spam', channel: 'smtp', text: /rejected under suspicion of SPAM|Spam limit exceeded/i, family: 'policy_block', permanent: true, source: 'https://yandex.com/support/mail/bounces/yandex/message-rejected-under-suspicion-of-spam.html' },
  ],
  ziggo: [
    // Ziggo's MXIN103: our IP is on a block list it uses (Cloudmark's CSI, Spamcop), in its own code with or without the words.
    { id: 'ziggo.rbl', channel: 'smtp', text: /\bMXIN103\b|\bbizsmtp Connection rejected\. Your IP\b/i, family: 'policy_block', permanent: true, scope: 'pool', source: 'find_string id 49466897185 (a bounce monitor\'s map for ziggo.nl: 550 mx10.tb.mail.iss.as9143.net MXIN103 Your IP … is in RBL); https://github.com/FreeUKGen/MyopicVicar/issues/997 (550 mx8.tb.ukmail.iss.as9143.net bizsmtp Connection rejected. Your IP … is in RBL)' },
  ],
  mailru: [
    // Mail.ru blocks a sending IP by its statistics (support_bl), and refuses dynamic addresses.
    { id: 'mailru.ip', channel: 'smtp', text: /support_bl\?ip=|\bIP is in blacklist|do not accept mail from (?:hosts with )?dynamic IP/i, family: 'policy_block', permanent: true, scope: 'pool', source: 'github:sisimai/rb-sisimai:lib/sisimai/reason/blocked.rb (# @mail.ru); win.mail.ru/cgi-bin/support_bl' },
    { id: 'mailru.spam', channel: 'smtp', text: /spam message (?:rejected|discarded)/i, family: 'policy_block', permanent: true, source: 'github:sisimai/rb-sisimai:lib/sisimai/reason/spamdetected.rb (spam message rejected. # mail.ru)' },
  ],
  free: [
    // Free defers an IP by its real-time statistics, for at most 24 hours (postmaster.free.fr).
    { id: 'free.ip', channel: 'smtp', status: [400, 499], text: /too many spams from your IP/i, family: 'reputation_deferral', permanent: false, scope: 'pool', source: 'https://postmaster.free.fr/index_en.html; github:sisimai/rb-sisimai:lib/sisimai/reason/blocked.rb (# free.fr)' },
    { id: 'free.spam', channel: 'smtp', text: /\bspam detected\b/i, family: 'policy_block', permanent: true, source: 'https://postmaster.free.fr/index_en.html (550 spam detected)' },
  ],
  zoho: [
    // Zoho Mail: the recipient domain's own filters and its virus scanner.
    { id: 'zoho.destination-filter', channel: 'smtp', text: /Mail rejected by destination domain/i, family: 'policy_block', permanent: true, source: 'https://smtp.codes/zoho (541 5.4.1)' },
    { id: 'zoho.virus', channel: 'smtp', text: /detected by Zoho Mail/i, family: 'content_rejected', permanent: true, source: 'https://smtp.codes/zoho (552 5.7.1 virus [name] detected by Zoho Mail)' },
  ],
  fastmail: [
    // Fastmail: a locked or deactivated address is the recipient's, though its words are a client host's refusal.
    { id: 'fastmail.locked', channel: 'smtp', text: /Address locked or deactivated/i, family: 'bad_recipient', permanent: true, source: 'https://brianjohnson.co.za/posts/avoid-fastmail/ (554 5.7.1 … Address locked or deactivated; see http://mail.messagingengine.com/docs/locked)' },
  ],
  protonmail: [
    // Proton: an address that is not configured to take mail does not exist for us.
    { id: 'protonmail.not-receiving', channel: 'smtp', text: /Address is not configured to receive emails/i, family: 'bad_recipient', permanent: true, source: 'github:crisp-oss/email-bounce-parser:test/fixtures/550_5_1_1_no_such_recipient_variant_3.txt' },
  ],
  proofpoint: [
    // Proofpoint's reputation service lists our IP (PDR, prs.proofpoint.com, ipcheck).
    { id: 'proofpoint.listed', channel: 'smtp', text: /prs\.proofpoint\.com|dnsbl-lookup\.cgi|ipcheck\.proofpoint\.com|Proofpoint (?:Dynamic )?Reputation/i, family: 'policy_block', permanent: true, scope: 'pool', source: 'github:ActiveCampaign/smtp-field-manual:data/codes/550.json (blocked using prs.proofpoint.com: Proofpoint Dynamic Reputation)' },
  ],
  barracuda: [
    // Barracuda Reputation (BRBL) lists our IP; ESS's "(rcpt:blocked)" is a policy block of the message.
    { id: 'barracuda.listed', channel: 'smtp', text: /Barracuda Reputation|barracudacentral\.(?:org|com)|barracudanetworks\.com\/reputation/i, family: 'policy_block', permanent: true, scope: 'pool', source: 'https://luxsci.com/blog/?p=16857; github:sisimai/rb-sisimai:lib/sisimai/reason/blocked.rb (.barracudacentral.org)' },
    { id: 'barracuda.blocked', channel: 'smtp', text: /permanent failure for one or more recipients \([^)]*:blocked\)|rejecting spoofed message/i, family: 'policy_block', permanent: true, source: 'github:ActiveCampaign/smtp-field-manual:data/codes/550.json' },
    { id: 'barracuda.licence', channel: 'smtp', status: [400, 499], text: /License Expired/i, family: 'transient_system', permanent: false, source: 'github:ActiveCampaign/smtp-field-manual:data/codes/422.json (the receiver\'s licence has expired)' },
  ],
  ironport: [
    // Cisco's default refusal of a sender group by its SenderBase (Talos) score: our IP's reputation.
    { id: 'ironport.poor-reputation', channel: 'smtp', text: /rejected due to the sending MTA's poor reputation/i, family: 'policy_block', permanent: true, scope: 'pool', source: 'https://community.cisco.com/t5/email-security/cisco-esa-domain-exception/m-p/4268260' },
  ],
  trendmicro: [
    // Trend Micro Email Reputation Services: RBL+ lists our IP (550), a zombie match defers it (450).
    { id: 'trendmicro.deferred', channel: 'smtp', text: /deferred using Trend Micro Email Reputation/i, family: 'reputation_deferral', permanent: false, scope: 'pool', source: 'https://hardwaresecrets.com/understanding-email-bounce-messages/4/' },
    { id: 'trendmicro.listed', channel: 'smtp', text: /Trend Micro RBL\+|rbl-plus\.mail-abuse\.org|Trend Micro Email Reputation|\bfor (?:RBL\+|Zombie) matches \(ERS\)|\bERS-RBL\b/i, family: 'policy_block', permanent: true, scope: 'pool', source: 'https://success.trendmicro.com/solution/1097055-frequently-asked-questions-faqs-about-messages-blocked-by-email-reputation-services-ers; https://docs.trendmicro.com/en-us/documentation/article/deep-discovery-email-inspector-51-online-help-smtp-error-codes' },
    // Its tags after "Recipient address rejected:" are the customer's policy, except Invalid-Recipient.
    { id: 'trendmicro.invalid-recipient', channel: 'smtp', text: /Recipient address rejected: Invalid-Recipient\b/i, family: 'bad_recipient', permanent: true, source: 'github:ActiveCampaign/smtp-field-manual:data/codes/554.json' },
    { id: 'trendmicro.policy-tag', channel: 'smtp', text: /Recipient address rejected: (?:ERS-Customized-Block|BLOCK-SEND-ER|BLOCK-RCPT|NO-DOMAIN)\b/i, family: 'policy_block', permanent: true, source: 'github:ActiveCampaign/smtp-field-manual:data/codes/550.json, 554.json' },
  ],
  symantec: [
    // Broadcom (Symantec) Email Security.cloud, formerly MessageLabs: its spam filter's verdict.
    { id: 'symantec.filtered', channel: 'smtp', text: /Message filtered\. (?:Please see|Refer to)/i, family: 'policy_block', permanent: true, source: 'http://www.symanteccloud.com/nl/nl/supportcentre/information/r_troublshooting (553-Message filtered, #5.7.1)' },
  ],
  cloudflare: [
    // Cloudflare Email Routing's "Upstream error": the forwarding destination failed, not our message.
    { id: 'cloudflare.upstream', channel: 'smtp', status: [400, 499], text: /Upstream error/i, family: 'transient_system', permanent: false, source: 'github:sisimai/set-of-emails:maildir/bsd/rhost-cloudflare-01.eml; https://developers.cloudflare.com/email-routing/postmaster/' },
  ],
  hornetsecurity: [
    // Hornetsecurity's reason codes (as EveryCloud, which resells it, publishes them): its own words for a block, a recipient check, a customer's rule.
    { id: 'hornetsecurity.blocked-address', channel: 'smtp', text: /Sender\/Recipient rejected/i, family: 'policy_block', permanent: true, source: 'https://support.everycloud.com/support/solutions/articles/4000007755-workspace-classification-codes (552 5.2.2: the sender or recipient address on a block list)' },
    { id: 'hornetsecurity.relay-check', channel: 'smtp', status: [400, 499], text: /Rejection when relay check is enabled/i, family: 'mailbox_temporary', permanent: false, source: 'https://support.everycloud.com/support/solutions/articles/4000007755-workspace-classification-codes (450 4.1.1: the recipient check at the destination)' },
    { id: 'hornetsecurity.customer-rule', channel: 'smtp', text: /required by customer rule|Compliance Filter Rule/i, family: 'policy_block', permanent: true, source: 'https://support.everycloud.com/support/solutions/articles/4000007755-workspace-classification-codes (554 5.6.5, 554 5.6.9)' },
  ],
  seppmail: [
    // SEPPmail.cloud as our outbound gateway: its blocks of our sender address are our account's standing.
    // Read when the caller names SEPPmail (its texts carry no mark of their own).
    { id: 'seppmail.sender-blocked', channel: 'smtp', text: /This sender has been blocked for sending bulk mail|This account is sending spam|bounce flood:/i, family: 'sender_config', permanent: false, source: 'https://docs.seppmail.com/en/cloud/c06_scf_06_support_outbound_sender_block.html' },
  ],
  sophos: [
    // Sophos Email gives the cause only as its code: XGEMAIL_0011 is a recipient the protected domain does not have.
    { id: 'sophos.no-recipient', channel: 'smtp', text: /\bXGEMAIL_0011\b/, family: 'bad_recipient', permanent: true, source: 'https://docs.sophos.com/central/customer/help/en-us/ManageYourProducts/EmailSecurity/SMTPErrorCodes/index.html' },
  ],
};

/** The sets as rows of the table, each naming its organisation. */
export const RECEIVER_ROWS: readonly ReplyRule[] = Object.entries(RECEIVER_RULES).flatMap(([receiver, rules]) =>
  rules.map((rule) => ({ ...rule, receiver })),
);
