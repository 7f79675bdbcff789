import type { Family, ReplyScope } from './reply-types.js';

/**
 * One row of the reply classifier's table. A row matches when every condition it sets
 * holds; the first matching row wins, so order is meaning.
 */
export interface ReplyRule {
  /** Stable id, recorded with every attempt: `smtp.rate-text-4xx`, `http.429`… */
  readonly id: string;
  readonly channel?: 'smtp' | 'http';
  /** One status, or an inclusive `[min, max]` range. `0` is "no response at all". */
  readonly status?: number | readonly [number, number];
  /** Tested against the enhanced status code found in the text (`5.1.1`); a row with it needs one. */
  readonly enhanced?: RegExp;
  /** Tested against the normalised text (SMTP: one line, basic codes stripped). */
  readonly text?: RegExp;
  /** The row does not match when the text matches this, whatever else holds. */
  readonly unless?: RegExp;
  /** Tested against the SDK's error name (SES). */
  readonly errorName?: RegExp;
  readonly family: Family;
  readonly permanent: boolean;
  readonly scope?: ReplyScope;
  /** `false`: the provider gave no answer about the message (nothing came back, or its own server failed). */
  readonly answered?: false;
  /**
   * The receiving organisation whose own rule this is: it applies only to replies from it
   * (named by the caller, the answering host or a mark in the text; `classify.ts`). For wording
   * that means something else elsewhere.
   */
  readonly receiver?: string;
}

/** Slugs that name an organisation by another name (the corpus's, a caller's). */
export const RECEIVER_ALIASES: Readonly<Record<string, string>> = {
  microsoft365: 'microsoft',
  exchange_online: 'microsoft',
  outlook: 'microsoft',
  hotmail: 'microsoft',
  aol: 'yahoo',
  gmail: 'google',
  icloud: 'apple',
};

/** Marks in a reply's text that only one organisation sends, when nothing else names it. */
export const RECEIVER_MARKS: Readonly<Record<string, RegExp>> = {
  google: /\bgsmtp\b|support\.google\.com/i,
  microsoft: /protection\.outlook\.com|\.outlook\.com\b|\bSTOREDRV\b|\bRESOLVER\.[A-Z]+/i,
  yahoo: /yahoo(?:inc)?\.com|yahoodns/i,
  qq: /\bqq\.com\b/i,
  mimecast: /mimecast/i,
};

// ---- wording shared by several rows -------------------------------------------------------
const NETWORK =
  /\b(?:ECONNREFUSED|ECONNRESET|ECONNABORTED|ETIMEDOUT|ENOTFOUND|EAI_AGAIN|EHOSTUNREACH|ENETUNREACH|EPIPE)\b|connection (?:timed out|refused|reset|lost|dropped)|timed out|timeout|no route to host|lost connection|unable to connect|could not connect|did not accept our requests to connect|host not reachable|network error|failed to connect|socket error|all hosts have been failing|disconnected abruptly/i;
// Volume-driven limits, whatever else the reply says (decision order 1).
const VOLUME =
  /unexpected volume|unusual rate|excessive volume|rate that prevents|receiving mail (?:at a rate|too quickly)|frequency limited|too frequent|number of allowed outgoing messages|RCPT numbers|\bper second\b|to many mails|in the last \d+ minutes|too many (?:recipients|messages|emails|mails|sessions|connections|connected clients|concurrent|open connections|new TLS sessions|recent messages|login attempts)|too much (?:mail|recipient)|max(?:imum)? (?:number of )?messages? per (?:connection|session)|(?:recipient|connection|submission|sending) rate|rate ?limit(?:ed|s)? (?:exceeded|reached)|exceeded (?:\w+ )?rate limit|ratelimit|(?:per|this|an) hour|exceeded (?:permitted|the configured) limit|thread limit exceeded|concurrent (?:smtp )?connections|queue quota exceeded|\bthrottl/i;
// A deferral or refusal whose stated cause is the sender: reputation, complaints, content,
// authentication, a block list, reverse DNS (decision orders 1 and 4).
const SENDER_CAUSE =
  /reputation|complaints?\b|\bspam\b|unsolicited|suspicious|\b(?:DMARC|SPF|DKIM)\b|unauthenticated|authentication (?:information|checks?|level)|authenticate with|\bPTR\b|reverse ?DNS|\brDNS\b|reverse hostname|cannot find your hostname|name lookup failed|does not resolve|forged hostname|may not be mail exchanger|helo (?:command )?rejected|bad helo|helo denied|block ?list(?:ed)?|black ?list(?:ed)?|\bDNSBLs?\b|\bRBL\b|spamhaus|sender verify|sender address rejected|sender domain|from domain|domain of sender|invalid sender|emetteur invalide|unverifyable sending|not in whitelist|cloudmark|unroutable sender|untrusted IP|cannot say you are me|remote ip check|helo ?host|sender ip ad+ress rejected|is filtered|register your IP|deliver mails? directly|sender address (?:rejected|blocked)|517 Invalid domain|\bFrom: domain\b|mismatches client ip|blocked (?:using|by)|MAIL FROM|RFC 7505 Null MX|my name was rejected|\((?:BL|DIAL|NOWL|RBL)\)|invalid ip for sending|invalid DNS MX|DNS (?:PTR|MX) resource|verification failed|barracuda reputation|\bSBRS\b|poor reputation|abuse/i;
const GREYLIST = /gr[ea]y ?list/i;
// Too many connections at once from us: about the receiver's connection slots, not its rate.
const CONNECTIONS =
  /too many (?:open |concurrent |simultaneous |smtp )*(?:connections|sessions|connected clients)|maximum number of (?:concurrent|simultaneous) (?:server )?connections|concurrent (?:smtp )?connections|trop de connexions|connection (?:count )?limit (?:exceeded|reached)|\bHL:ICC\b|AUP#CXCNCT/i;
// Our addresses on a block list (DNSBL): about the IP pool we send from, at that receiver.
const LISTED =
  /block ?list|black ?list|\bDNSBLs?\b|\bRBL\b|spamhaus|blocked using|(?<!not )listed (?:in|on|at|by)|is listed|barracuda reputation|cloudmark|\b[SXP]BL\b|\[BL\d\d\]|\((?:BL|RBL)\)|sorbs|spamcop|abuseat|mail-abuse|black ip/i;
// One recipient receiving faster than its mailbox takes: only that recipient waits.
const RECIPIENT_RATE =
  /rate that prevents additional messages|receiving mail (?:at a rate|too quickly)|recipient has exceeded (?:their|the) limit|can (?:send to this recipient|receive) per hour|exceeded message rate limit|too many recent messages|received too much email in a short period/i;
const SYSTEM =
  /temporary (?:system problem|failure|error|lookup failure|local problem|internal error|server error)|internal (?:server )?error|local error in processing|insufficient system (?:resources|storage)|system resources|service (?:not |temporarily )?(?:available|unavailable)|resources temporarily unavailable|too (?:much )?(?:load|busy)|service currently unavailable|server (?:is )?busy|all server ports are busy|out of memory|queue file write error|operating system error|configuration error|unable to read controls|shutting down|backend failure|mail system full|license expired|come back later|upstream error|failed to be replicated|error on this server|temporary domain failure|\brDNS temporary failure|qqt failure|delivery (?:to the following recipients? )?(?:has been|is) delayed|hop count exceeded|too many hops|routing loop|mail loop|looping|received"? headers/i;
const TRY_LATER =
  /try again later|try again in|please try later|retry later|essayer plus tard|come back later|temporar(?:y|ily)\b/i;
const MAILBOX_FULL =
  /over ?quota|quota exceeded|exceeded (?:storage|the storage)|storage (?:quota|space|allocation)|out of storage|mailbox (?:is )?full|mailfolder is full|box is full|inbox is full|mailbox exceeds|mailbox size limit|exceeds allowed size|disk quota|exhausted allowed storage|speichervolumen|too many messages on the server|too much mail (?:data|stored)|number of messages in recipient's mailbox|possible to save the message in the target mailbox|cannot update mailbox.*too large|exceed maximum mailbox size|quota violation|\bpleine\b|mailbox full/i;
const NO_RECIPIENT =
  /recipient ?not ?found|user unknown|unknown user|unknown recipient|no such (?:user|mailbox|recipient)|user (?:does not|doesn't) exist|(?:address|account|mailbox|recipient) (?:does not|doesn't) exist|doesn't have an? \S+ account|mailbox not found|mailbox unavailable|invalid (?:recipient|user|address|mailbox|final delivery userid)|addressee unknown|user not found|not listed in|no mailbox here|not our customer|is not a registered|unknown or illegal alias|no longer (?:valid|on server|available)|mailbox unallocated|recipient unknown|bad address syntax|address rejected: (?:user unknown|invalid|undeliverable)|not a valid (?:recipient|address)|(?:account|mailbox|user|address) (?:is |has been |was |currently )?(?:not active|inactive|disabled|deactivated|discontinued|suspended|frozen|blocked|locked or deactivated|archiv)|inactive email|compte du destinataire|destinataire invalide|archived recipient|badrcptto|ResolverAdrRecipientNotFound|RecipientNotFound|dd This user|unrouteable address|previously bounced|bounced address|has a recent history of bouncing|^invalid$|disabled recipient|ad+ress unknown|no mailbox by that name|user \S+ does not exist|do(?:es)?s?n't exist|isn't allowed to receive|isn't a local account|account closed|ディレクトリには見つかりません|no valid recipients for this MM|banned recipient|marked as invalid|not a valid RFC-?5321 address|#5\.1\.0 Address rejected|need fully-qualified address|not allowed to receive|mailbox is not allowed/i;
const NO_DOMAIN =
  /domain (?:not found|does not exist|is not reachable)|no such domain|host (?:or domain name )?(?:unknown|not found)|host \S+ not found|couldn't find (?:any host|a mail exchanger)|unrouteable|null MX|no MX|\bNXDOMAIN\b|had no relevant answers|does not accept (?:e-?)?mail|indicated no SMTP service|illegal (?:host|MX)|invalid domain|InfoNoRecords|domain \S+ does not exist|NonExistentDomain|InfoDomainNonexistent/i;
const CONTENT =
  /message (?:size|length|too (?:large|big)|header size)|size (?:limit|exceeds)|too (?:large|big)|exceeds? (?:the )?(?:fixed )?(?:maximum|databytes)|request entity too large|virus|malware|infected|attachment|banned content|content presents|rfc ?(?:5322|2822|822)|not rfc|headers? (?:error|too large|is ridiculously|line is too long)|header (?:based|line)|multiple (?:from|subject)|missing a valid|message-id|disallowed header|encoded-word|8-bit data|bare (?:<?LF|line)|\bsmtplf\b|line limit|mime parts|resent-from|duplicate header|invalid characters|message content rejected|content rejected|not a valid address|does not contain a valid address|\bc=h[id]\b|addresses in From:|equal X-headers|length of (?:DATA|Attach)|policy violation detected \(AS345\)|maximum size|taille limite/i;
// "Quota" that is a sending limit, not a mailbox's.
const NOT_A_MAILBOX =
  /queue quota|quota for sending|submission quota|send(?:ing)? quota|relay quota|with the same Message-ID/i;
// A spam verdict is policy, even when it also names the content (decision order 5).
const SPAM_VERDICT =
  /scored as spam|suspected spam|spam or virus|spam (?:detected|message|URL)|judged to be spam|\bUBE\b|anti-spoofing|blocked senders/i;
const POLICY =
  /block|banned|denied|not allowed|not permitted|refused|reject|prohibit|not authori[sz]ed|unauthorized|local policy|policy|spam|relay|not accepted|forbidden|weren't sent|not configured to use this MX|same size mails|not a member|filtered|MX only|not welcome|cannot deliver mail for|unsubscribed/i;

// One row a line, so the table reads as a table (prettier would spread each row over seven).
// prettier-ignore
/**
 * The reply classifier's table (bump `CLASSIFIER_VERSION` with any change). Ordered by the
 * decision order of DESIGN.md (Reading replies): our own account and the ESP APIs first, then
 * receivers' own code tables, then the general wording: volume, the sender's causes, the
 * mailbox, the address, the domain, content, policy, and the status class last. Every row was
 * written for replies in `test/corpus/replies.jsonl` or `test/fixtures/replies.ts`, which name
 * where each text was published.
 */
export const RULES: readonly ReplyRule[] = [
  // ---- no answer at all --------------------------------------------------------------
  { id: 'net.no-response', status: 0, family: 'transient_system', permanent: false, answered: false },
  // Mailgun's SDK reports a refused or timed-out request as status 400 with the socket code.
  { id: 'http.network-error', channel: 'http', text: NETWORK, family: 'transient_system', permanent: false },

  // ---- ESP APIs: specific names and wording before the status --------------------------
  // SES sends the daily quota under a throttling name; the text is what tells them apart.
  { id: 'http.daily-quota', channel: 'http', text: /daily message quota exceeded|maximum credits exceeded|messaging limits|daily (?:sending )?limit/i, family: 'quota_exhausted', permanent: false, scope: 'provider' },
  // SES refuses an address it cannot parse; Postmark one it marked inactive (why, it does not say).
  { id: 'http.address-invalid', channel: 'http', text: /Local address contains illegal character|^InvalidParameterValue: Missing domain$/i, family: 'bad_recipient', permanent: true },
  { id: 'http.inactive-recipient', channel: 'http', text: /marked as inactive|Missing final '@domain'/i, family: 'unknown', permanent: false },
  // Mailgun 420 "recipient limit exceeded, try again after <date>": a window, not a rate.
  { id: 'http.window-limit', channel: 'http', text: /\b(?:recipient|sending|message) limit exceeded\b/i, family: 'quota_exhausted', permanent: false, scope: 'provider' },
  { id: 'http.throttle-name', channel: 'http', errorName: /^(?:TooManyRequestsException|LimitExceededException|ThrottlingException|Throttling)$/, family: 'throttled', permanent: false, scope: 'provider' },
  { id: 'http.rate-text', channel: 'http', text: /maximum sending rate exceeded|too many (?:requests|messages)|rate limit/i, family: 'throttled', permanent: false, scope: 'provider' },
  { id: 'http.429', channel: 'http', status: 429, family: 'throttled', permanent: false, scope: 'provider' },
  // The account, not the message, is refused: temporary, so the worker marks the provider down.
  { id: 'http.account-halt-name', channel: 'http', errorName: /^(?:SendingPausedException|AccountSuspendedException|AccountSendingPausedException|UnrecognizedClientException)$/, family: 'sender_config', permanent: false },
  { id: 'http.account-halt-text', channel: 'http', text: /sending (?:is )?paused|temporar(?:ily|y) block|account (?:is )?(?:suspended|disabled)/i, family: 'sender_config', permanent: false },
  { id: 'http.mail-from-unverified', channel: 'http', errorName: /^MailFromDomainNotVerifiedException$/, family: 'sender_config', permanent: true },
  { id: 'http.not-verified', channel: 'http', text: /not verified|verified sender identity/i, family: 'sender_config', permanent: true },
  { id: 'http.sandbox-domain', channel: 'http', text: /sandbox subdomains|is not allowed to send|free accounts are for test purposes|authorized recipients/i, family: 'sender_config', permanent: true },
  // SES refuses an address it already saw hard-bounce: the address is bad, not the message.
  { id: 'http.suppressed-address', channel: 'http', errorName: /^MessageRejected$/, text: /address blacklisted|hard bounce|suppression list/i, family: 'bad_recipient', permanent: true },
  { id: 'http.recipient-field', channel: 'http', status: [400, 499], text: /personalizations\.\d+\.(?:to|cc|bcc)\.\d+\.email|'to' parameter is not a valid address/i, family: 'bad_recipient', permanent: true },
  { id: 'http.5xx', channel: 'http', status: [500, 599], family: 'transient_system', permanent: false, answered: false },
  { id: 'http.401', channel: 'http', status: 401, family: 'sender_config', permanent: false },
  { id: 'http.403', channel: 'http', status: 403, family: 'sender_config', permanent: true },
  { id: 'http.404', channel: 'http', status: 404, family: 'sender_config', permanent: true },
  // SendGrid: "Unavailable due to data residency restrictions".
  { id: 'http.451', channel: 'http', status: 451, family: 'sender_config', permanent: true },
  { id: 'http.4xx', channel: 'http', status: [400, 499], family: 'content_rejected', permanent: true },

  // ---- SMTP: our own relay or ESP account (sender_config is only ours) ------------------
  { id: 'smtp.ses-daily-quota', channel: 'smtp', text: /daily message quota exceeded|maximum credits exceeded|exceeded your messaging limits/i, family: 'quota_exhausted', permanent: false, scope: 'provider' },
  { id: 'smtp.ses-rate', channel: 'smtp', text: /maximum sending rate exceeded/i, family: 'throttled', permanent: false, scope: 'provider' },
  // Our login to the smarthost, its TLS demand, or the identity it lets us send as (RFC 4954 §6).
  { id: 'smtp.our-relay', channel: 'smtp', text: /must issue an? (?:AUTH|STARTTLS)|STARTTLS is required to send|authentication (?:is )?required|authentification requise|authentication (?:unsuccessful|failed)|incorrect authentication|invalid credentials|invalid logon|turn on SMTP authentication|client (?:was )?not authenticated to send|unauthenticated senders not allowed|SmtpClientAuthentication|application-specific password|log in via your web browser|not logged in|send mail as|does not advertise AUTH|does not support TLS|authentification invalide|is not allowed to send: (?:please activate|sandbox)|sandbox subdomains|local user only|smtp auth error|fail authentication|message sending for this account is disabled|DT:SUM|bad outbound sender|tenant has exceeded|TenantAttribution|traffic not accepted from this IP|unregistered domains|spam abuse detected|mail sending denied|originating from your (?:account|address)\b|your account has been suspended|account is not yet activated|authenticate first|does not allow external forwarding|X-MSYS-API|Unconfigured Sending Domain|isn't allowed to send email|X-ApiKey|X-CampaignID|authentication failure|doesn't conform with authentication|non-local account|relay for one of the domains|registered in your Workspace SMTP Relay|daily relay quota/i, unless: /relay quota|daily limit|relaying denied|\b(?:SPF|DKIM|DMARC)\b|RESOLVER\.RST/i, family: 'sender_config', permanent: false },
  // The identity we send as is not ours to use there: no retry fixes it until someone sets it up.
  { id: 'smtp.our-identity', channel: 'smtp', text: /verified sender identity|email address is not verified|not owned by user|mail from not owned|unauthorized use of sender|doesn't match AUTH domain|permissions to send as|SendAsDenied|not authorized to send from/i, family: 'sender_config', permanent: true },
  { id: 'smtp.our-relay-quota', channel: 'smtp', text: /daily (?:relay|user sending|SMTP relay) (?:quota|limit)|relay quota|daily limit for sending|submission quota|daily limit for message recipients|send quota exceeded/i, family: 'quota_exhausted', permanent: false, scope: 'provider' },
  { id: 'smtp.auth-failed', channel: 'smtp', status: [530, 538], unless: /too (?:big|many)/i, family: 'sender_config', permanent: false },

  // ---- receivers' own code tables (text marks that only they send) ----------------------
  // NetEase (163/126): http://help.163.com/09/1224/17/5RAJ4LMH00753VB8.html
  { id: 'netease.quota', channel: 'smtp', text: /\b(?:MI:STC|RP:TRC)\b/, family: 'quota_exhausted', permanent: false, scope: 'receiver' },
  { id: 'netease.connections', channel: 'smtp', text: /\bHL:ICC\b/, family: 'throttled', permanent: false, scope: 'connections' },
  { id: 'netease.rate', channel: 'smtp', text: /\b(?:HL:IFC|MI:DMC|RP:DRC|MI:SFQ|RP:QRC|RP:RCL)\b/, family: 'throttled', permanent: false, scope: 'receiver' },
  { id: 'netease.reputation-4xx', channel: 'smtp', status: [400, 499], text: /\b(?:HL:[MR]EP|DT:RBL|WM:BLI|DT:SPM)\b/, family: 'reputation_deferral', permanent: false, scope: 'receiver' },
  { id: 'netease.unknown', channel: 'smtp', text: /\bMI:CEL\b/, family: 'unknown', permanent: false },
  { id: 'netease.block', channel: 'smtp', status: [500, 599], text: /\b(?:DT|MI|HL|RP|WM):[A-Z]{3}\b/, family: 'policy_block', permanent: true },
  // QQ: "Mailbox unavailable or access denied" is its per-recipient receiving limit.
  { id: 'qq.recipient-rate', channel: 'smtp', receiver: 'qq', text: /^Mailbox unavailable or access denied$/i, family: 'throttled', permanent: false, scope: 'recipient' },
  // Charter/Spectrum AUP#I-13xx: connection and rate limits (spectrum.net/support/internet/understanding-email-error-codes).
  { id: 'charter.rate', channel: 'smtp', text: /AUP#In?-?13\d\d|spectrum\.net\/support\/internet\/aup-blocked/i, family: 'throttled', permanent: false, scope: 'receiver' },
  { id: 'cox.connections', channel: 'smtp', text: /AUP#CXCNCT/i, family: 'throttled', permanent: false, scope: 'connections' },
  // Yahoo: TS01–TS02 complaints, TS03/TSS06+ permanent deferral, BL/PH policy.
  { id: 'yahoo.permanent-deferral', channel: 'smtp', text: /permanently deferred/i, family: 'policy_block', permanent: true },
  // Yahoo "4.16.50" is its reputation deferral (help.yahoo.com/help/us/mail/defer/defer-06.html).
  { id: 'yahoo.defer-4.16.50', channel: 'smtp', status: [400, 499], text: /temporarily deferred - 4\.16\.5\d/i, family: 'reputation_deferral', permanent: false, scope: 'receiver' },
  // Alibaba Mail (Aliyun) and Vade speak their own words for limits and connections.
  { id: 'aliyun.local-sender', channel: 'smtp', receiver: 'aliyun', text: /Mailfrom account is a local account/i, family: 'policy_block', permanent: true },
  { id: 'aliyun.rcpt-attempts', channel: 'smtp', receiver: 'aliyun', text: /number of RCPT attempts is achieved the maximum threshold/i, family: 'quota_exhausted', permanent: false },
  { id: 'aliyun.rcpt-total', channel: 'smtp', receiver: 'aliyun', text: /total of RCPTs is achieved the maximum threshold/i, family: 'throttled', permanent: false, scope: 'receiver' },
  { id: 'aliyun.unavailable', channel: 'smtp', receiver: 'aliyun', text: /"RCPT TO" mailbox unavailable/i, family: 'unknown', permanent: false },
  { id: 'vade.connections', channel: 'smtp', receiver: 'vade', status: [400, 499], text: /^4\.2\.1 Connection refused$/i, family: 'throttled', permanent: false, scope: 'connections' },
  { id: 'vade.refused', channel: 'smtp', receiver: 'vade', status: [500, 599], text: /Connection refused/i, family: 'policy_block', permanent: true },
  { id: 'vade.deferred', channel: 'smtp', receiver: 'vade', text: /Connection deferred/i, family: 'transient_system', permanent: false },
  // AOL's documented refusal codes (postmaster.info.aol.com/errors): RTR, RLY, DYN, HVU, CON.
  { id: 'aol.block-codes', channel: 'smtp', status: [500, 599], text: /\b(?:RTR|RLY|DYN|HVU|CON):[A-Z0-9]{2}\b/, family: 'policy_block', permanent: true },
  { id: 'yahoo.gl01', channel: 'smtp', status: [400, 499], text: /\[GL01\]/, family: 'reputation_deferral', permanent: false, scope: 'receiver' },
  // GoDaddy IB codes: "temporarily blocked" (an hour) against "blocked for the day".
  { id: 'godaddy.temporary-block', channel: 'smtp', text: /(?:has been temporarily blocked|temporarily rejected)\b.*\bIB\d{3}\b/i, family: 'reputation_deferral', permanent: false, scope: 'receiver' },
  { id: 'godaddy.day-block', channel: 'smtp', text: /blocked for the day/i, family: 'policy_block', permanent: true },
  // Orange / La Poste "Service refusé, veuillez essayer plus tard": the sender refused for now.
  { id: 'orange.refused-later', channel: 'smtp', text: /service refus(?:e|é)d?\b.*(?:try later|essayer plus tard)/i, unless: /OFR005_505|LPN007_505/, family: 'reputation_deferral', permanent: false, scope: 'receiver' },
  { id: 'orange.end-of-data', channel: 'smtp', text: /\b(?:OFR005_505|LPN007_505)\b/, family: 'transient_system', permanent: false },
  { id: 'yahoo.bare-code', channel: 'smtp', text: /^Message not allowed - \[\d+\]$/, family: 'unknown', permanent: false },
  // GMX / web.de / IONOS policy cases: header checks are content, the rest policy.
  { id: 'gmx.header-policy', channel: 'smtp', status: [500, 599], text: /policy restrictions.*(?:\(header based\)|[?&]c=h[id]\b)/i, family: 'content_rejected', permanent: true },
  // Mimecast defers an unknown internal user with 451 by default (its 451 "Invalid Recipient").
  { id: 'mimecast.invalid-recipient-4xx', channel: 'smtp', receiver: 'mimecast', status: [400, 499], text: /invalid recipient/i, family: 'mailbox_temporary', permanent: false },
  { id: 'mimecast.internal-resource', channel: 'smtp', status: [400, 499], text: /internal resource (?:is )?temporarily unavailable/i, family: 'greylisted', permanent: false },
  // Microsoft 365 5.4.1 "Recipient address rejected: Access denied": not in the tenant's directory.
  { id: 'microsoft.directory', channel: 'smtp', enhanced: /^5\.4\.1$/, text: /recipient address(?:es)? rejected ?: access denied/i, family: 'bad_recipient', permanent: true },
  { id: 'microsoft.wrong-region', channel: 'smtp', text: /wrong Office 365 region/i, family: 'unknown', permanent: false },
  { id: 'microsoft.nonexistent-domain', channel: 'smtp', status: [500, 599], text: /NonExistentDomain|InfoDomainNonexistent/, family: 'bad_domain', permanent: true },
  // Microsoft 4.7.500–4.7.899 "server busy / access denied, try later": its pacing (issue 15).
  { id: 'microsoft.busy', channel: 'smtp', enhanced: /^4\.7\.(?:5\d\d|8\d\d)/, text: /server busy|access denied, please try again later/i, family: 'throttled', permanent: false, scope: 'receiver' },

  // A reply that lists several causes, or none, decides nothing (decision order 8).
  { id: 'smtp.bare-refusal', channel: 'smtp', unless: /^5\.1\.1 \S+ recipient address rejected$/i, text: /^(?:[245]\.\d+\.\d+ )?(?:<?\S+@\S+>?:? )?(?:recipient address |recipient )?(?:rejected|denied)\.?$|^recipient <\S+> denied$|denied temporarily|delivery failure policy error|服务器拒绝|recipient not in route list|^5\.2\.1 Mailbox not available$|^(?:[245]\.\d+\.\d+ )?Unable to deliver to <?\S+>?\.?$|delivery restricted by policy|\bofr_513\b/i, family: 'unknown', permanent: false },
  { id: 'smtp.521-unavailable', channel: 'smtp', status: 521, text: /service currently unavailable/i, family: 'unknown', permanent: false },
  { id: 'smtp.undecided', channel: 'smtp', text: /\bmay not exist\b.*\bmay be\b|mailbox unavailable or access denied/i, family: 'unknown', permanent: false },
  // ---- expiry with a last error: read the error (decision order 7) -----------------------
  { id: 'smtp.expired-network', channel: 'smtp', text: /(?:expired|too old|retry timeout exceeded|giving up|could not be delivered for).*(?:connection (?:timed out|refused)|timeout|unable to connect)/i, family: 'transient_system', permanent: false },

  // ---- greylisting passes on the next try, whatever code carries it -----------------------
  { id: 'smtp.greylist', channel: 'smtp', text: GREYLIST, family: 'greylisted', permanent: false },

  // ---- a mailbox that will come back (before volume: "over quota temporarily") -------------
  { id: 'smtp.mailbox-temporary', channel: 'smtp', text: /(?:mailbox|user|recipient|account)\b.{0,40}\b(?:locked|quota|unavailable|full)\b.{0,20}\b(?:temporar|try again)|temporary failure.{0,40}quota|recipient temporarily unavailable|box is busy|recipient error\. please try again|^\S*(?:@|email)\S* temporarily unavailable/i, family: 'mailbox_temporary', permanent: false },

  // ---- the mailbox ------------------------------------------------------------------------
  { id: 'smtp.mailbox-full-4xx', channel: 'smtp', status: [400, 499], text: MAILBOX_FULL, unless: NOT_A_MAILBOX, family: 'mailbox_temporary', permanent: false },
  { id: 'smtp.mailbox-full', channel: 'smtp', text: MAILBOX_FULL, unless: NOT_A_MAILBOX, family: 'mailbox_full', permanent: true },

  // ---- volume-driven limits: throttled, whatever the class (decision orders 1–3) -----------
  // A daily, monthly or plan limit is a quota, an hour or less a rate.
  { id: 'smtp.daily-quota', channel: 'smtp', text: /(?:daily|per day|monthly|24[- ]hours?) (?:\w+ ){0,3}(?:quota|limit)|quota for sending|within 24 hours|\bper day\b/i, unless: /Message-ID/i, family: 'quota_exhausted', permanent: false, scope: 'receiver' },
  { id: 'smtp.connections', channel: 'smtp', text: CONNECTIONS, unless: /per (?:minute|hour|second)|frequency/i, family: 'throttled', permanent: false, scope: 'connections' },
  { id: 'smtp.recipient-rate', channel: 'smtp', text: RECIPIENT_RATE, family: 'throttled', permanent: false, scope: 'recipient' },
  // A limit whose stated cause is the sender (complaints with no volume, authentication,
  // reputation) is a reputation deferral below, even when worded "rate limited".
  { id: 'smtp.volume', channel: 'smtp', text: VOLUME, unless: /blocked for the day|invalid recipients|temporarily blocked for attempting|due to (?:ip )?reputation|because (?:SPF|DKIM|the From|this message wasn't|there is no DMARC)|rate limited because|(?:DMARC|SPF|DKIM|TLS)\b.{0,60}rate limited|too much spam|untrusted IP/i, family: 'throttled', permanent: false, scope: 'receiver' },
  { id: 'smtp.gmail-same-message-id', channel: 'smtp', text: /exceeded its quota for sending messages with the same Message-ID|Multiple destination domains per transaction|Domain policy size per transaction|Recipients belong to multiple regions|Peak SMTP relay limit/i, family: 'throttled', permanent: false, scope: 'receiver' },
  { id: 'smtp.too-many-recipients-code', channel: 'smtp', enhanced: /^[45]\.5\.3$/, family: 'throttled', permanent: false, scope: 'receiver' },

  // ---- DNS trouble on either side: the receiver's (try again) or its check of our sender ----
  { id: 'smtp.temporary-lookup', channel: 'smtp', text: /temporary lookup failure|temporary error occurred during|temporary \w+ DNS lookup failure|rDNS Temporary Failure|SuspiciousRemoteServer|host not found, try again|malformed or unexpected name server reply|host name lookup failure|temporary domain failure/i, family: 'transient_system', permanent: false },
  { id: 'smtp.dns-lookup-4xx', channel: 'smtp', status: [400, 499], text: /DNS look-?up/i, family: 'reputation_deferral', permanent: false, scope: 'receiver' },

  // ---- a block-list listing of our IPs: that receiver's circuit for the pool (decision order 4) --
  { id: 'smtp.listed-4xx', channel: 'smtp', status: [400, 499], text: LISTED, unless: /temporary (?:lookup )?(?:failure|error)/i, family: 'reputation_deferral', permanent: false, scope: 'pool' },
  { id: 'smtp.listed-5xx', channel: 'smtp', status: [500, 599], text: LISTED, unless: /temporarily/i, family: 'policy_block', permanent: true, scope: 'pool' },

  // ---- the sender's causes (decision orders 1, 4 and 5) -----------------------------------
  { id: 'smtp.sender-cause-4xx', channel: 'smtp', status: [400, 499], text: SENDER_CAUSE, unless: /too many errors/i, family: 'reputation_deferral', permanent: false, scope: 'receiver' },
  { id: 'smtp.policy-4xx', channel: 'smtp', status: [400, 499], text: /policy violation|reject(?:ed)? due to policy/i, family: 'reputation_deferral', permanent: false, scope: 'receiver' },
  { id: 'smtp.rate-limited-4xx', channel: 'smtp', status: [400, 499], text: /rate limited|deferred due to|whitelist/i, family: 'reputation_deferral', permanent: false, scope: 'receiver' },
  // Text over code (decision order 6): a 5xx that says "temporarily" about the sender.
  { id: 'smtp.sender-cause-temporary-5xx', channel: 'smtp', status: [500, 599], text: /temporarily (?:blocked|rejected|deferred)/i, family: 'reputation_deferral', permanent: false, scope: 'receiver' },

  // ---- content (decision order 5): size, virus, format --------------------------------------
  { id: 'smtp.content', channel: 'smtp', text: CONTENT, unless: SPAM_VERDICT, family: 'content_rejected', permanent: true },
  { id: 'smtp.content-code', channel: 'smtp', status: [500, 599], enhanced: /^5\.(?:6\.\d{1,3}|3\.4|2\.3)$/, unless: /spam|policy|sender ip/i, family: 'content_rejected', permanent: true },

  // ---- the sender checked by the receiver, refused (decision order 4) -----------------------
  // The sender's domain checked by the receiver is policy, not our recipient's.
  { id: 'smtp.sender-cause-5xx', channel: 'smtp', status: [500, 599], text: SENDER_CAUSE, unless: /recipient (?:address )?rejected: (?:user unknown|invalid)/i, family: 'policy_block', permanent: true },

  // ---- the receiver's own trouble ----------------------------------------------------------
  { id: 'smtp.network', channel: 'smtp', text: NETWORK, unless: /^retry timeout exceeded\.?$/i, family: 'transient_system', permanent: false },
  { id: 'smtp.system', channel: 'smtp', text: SYSTEM, unless: /no such|not found|NXDOMAIN|host unknown/i, family: 'transient_system', permanent: false },

  // ---- a 5xx the receiver says to retry (decision order 6) ----------------------------------
  { id: 'smtp.try-later-5xx', channel: 'smtp', status: [500, 599], text: TRY_LATER, unless: /retrying will not succeed/i, family: 'transient_system', permanent: false },

  // ---- the address and the domain -------------------------------------------------------
  // Before the recipient wording: Postfix says "Recipient address rejected: Domain not found".
  // 5.1.7 and 5.1.8 are about our sender's address, whatever the text says of a domain.
  { id: 'smtp.sender-code', channel: 'smtp', status: [500, 599], enhanced: /^5\.1\.[78]$/, family: 'policy_block', permanent: true },
  { id: 'smtp.bad-domain-4xx', channel: 'smtp', status: [400, 499], text: NO_DOMAIN, family: 'unknown', permanent: false },
  { id: 'smtp.bad-domain-text', channel: 'smtp', text: NO_DOMAIN, family: 'bad_domain', permanent: true },
  // A 4xx about the address is the receiver choosing to defer: retried, never suppressed on it.
  { id: 'smtp.bad-recipient-4xx', channel: 'smtp', status: [400, 499], text: NO_RECIPIENT, unless: /policy|sender address|or access denied/i, family: 'mailbox_temporary', permanent: false },
  { id: 'smtp.bad-recipient-text', channel: 'smtp', text: NO_RECIPIENT, unless: /policy|sender address|or access denied/i, family: 'bad_recipient', permanent: true },
  { id: 'smtp.bad-domain-code', channel: 'smtp', status: [500, 599], enhanced: /^5\.1\.(?:2|10)$/, family: 'bad_domain', permanent: true },
  { id: 'smtp.bad-mailbox-code', channel: 'smtp', status: [500, 599], enhanced: /^5\.(?:1\.[1346]|2\.1)$/, unless: /block|banned|denied|spam|policy|relay|not authori|unauthori|prohibit|refused/i, family: 'bad_recipient', permanent: true },

  // ---- policy (decision orders 4 and 5) ----------------------------------------------------
  { id: 'smtp.policy-text', channel: 'smtp', status: [500, 599], text: POLICY, family: 'policy_block', permanent: true },
  { id: 'smtp.policy-code', channel: 'smtp', status: [500, 599], enhanced: /^5\.7\.\d{1,3}$/, family: 'policy_block', permanent: true },

  // ---- the status class ---------------------------------------------------------------------
  { id: 'smtp.mailbox-4xx', channel: 'smtp', status: [400, 499], enhanced: /^4\.2\.\d{1,3}$/, family: 'mailbox_temporary', permanent: false },
  { id: 'smtp.4xx', channel: 'smtp', status: [400, 499], unless: /(?:message|delivery) expired|unable to deliver this message after|too many errors|TLS required|mailbox delivery restricted|Open relay|Requested action aborted \[|TLS\/SSLv3/i, family: 'transient_system', permanent: false },
  // nodemailer too treats 503 (bad sequence) as not permanent: it is our session, not the mail.
  { id: 'smtp.503', channel: 'smtp', status: 503, unless: /send HELO|RCPT first/i, family: 'transient_system', permanent: false },

  // ---- nothing else said anything: temporary, with the low cap of its own family -----
  { id: 'fallback.unknown', family: 'unknown', permanent: false },
];
