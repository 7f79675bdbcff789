import { RECEIVER_ROWS } from './receiver-rules.js';
import {
  EITHER,
  MAILBOX_OVER,
  MESSAGE_UNFIT,
  NOT_A_MAILBOX as NOT_A_FULL_MAILBOX,
  NOT_CONTENT,
  NOT_SYSTEM,
  NOT_THE_RECIPIENT,
  NOT_VOLUME,
  RECEIVER_TROUBLE,
  RECIPIENT_GONE,
  TOO_MUCH_TRAFFIC,
  WINDOW_LIMIT,
} from './reply-lexicon.js';
import type { ReplyRule } from './reply-types.js';

export type { ReplyRule };

// ---- wording shared by several rows -------------------------------------------------------
const NETWORK =
  /\b(?:ECONNREFUSED|ECONNRESET|ECONNABORTED|ETIMEDOUT|ENOTFOUND|EAI_AGAIN|EHOSTUNREACH|ENETUNREACH|EPIPE)\b|connection (?:timed out|refused|reset|lost|dropped)|timed out|timeout|no route to host|lost connection|unable to connect|could not connect|did not accept our requests to connect|host not reachable|network error|failed to connect|socket error|all hosts have been failing|disconnected abruptly|inaccessible for too long|connection with \S+ is broken/i;
// Volume-driven limits, whatever else the reply says (decision order 1).
const VOLUME =
  /unexpected volume|unusual rate|excessive volume|rate that prevents|receiving mail (?:at a rate|too quickly)|frequency limited|too frequent|number of allowed outgoing messages|RCPT numbers|\bper second\b|to many mails|in the last \d+ minutes|too many (?:recipients|messages|emails|mails|sessions|connections|connected clients|concurrent|open connections|new TLS sessions|recent messages|login attempts)|too much (?:mail|recipient)|max(?:imum)? (?:number of )?messages? per (?:connection|session)|(?:recipient|connection|submission|sending) rate|rate ?limit(?:ed|s)? (?:exceeded|reached)|exceeded (?:\w+ )?rate limit|ratelimit|(?:per|this|an) hour|exceeded (?:permitted|the configured) limit|thread limit exceeded|concurrent (?:smtp )?connections|queue quota exceeded|\bthrottl|(?:rcpt|recipient) limit (?:exceeded|reached)|max(?:imum)? (?:number of )?(?:rcpts?|recipients)\b|transfer quota|hourly (?:\w+ )?(?:rate|limit)|recipients per message|mail flood|too many (?:recipient attempts|requests)|sending too fast|send again soon|been rate limited|message threshold|flood detected|flooding|too fast|per (?:second|minute)|number of (?:messages|recipients|connections)\b.{0,30}\bexceed|exceeded hour limit/i;
// A deferral or refusal whose stated cause is the sender: reputation, complaints, content,
// authentication, a block list, reverse DNS (decision orders 1 and 4).
const SENDER_CAUSE =
  /reputation|complaints?\b|\bspam\b|unsolicited|suspicious|\b(?:DMARC|SPF|DKIM)\b|unauthenticated|authentication (?:information|checks?|level)|authenticate with|\bPTR\b|reverse ?DNS|\brDNS\b|reverse hostname|cannot find your hostname|name lookup failed|does not resolve|forged hostname|may not be mail exchanger|helo (?:command )?rejected|bad helo|helo denied|block ?list(?:ed)?|black ?list(?:ed)?|\bDNSBLs?\b|\bRBL\b|spamhaus|sender verify|sender address rejected|sender domain|from domain|domain of sender|invalid sender|emetteur invalide|unverifyable sending|not in whitelist|cloudmark|unroutable sender|untrusted IP|cannot say you are me|remote ip check|helo ?host|sender ip ad+ress rejected|is filtered|register your IP|deliver mails? directly|sender address (?:rejected|blocked)|517 Invalid domain|\bFrom: domain\b|mismatches client ip|blocked (?:using|by)|MAIL FROM|RFC 7505 Null MX|my name was rejected|\((?:BL|DIAL|NOWL|RBL)\)|invalid ip for sending|invalid DNS MX|no access for this (?:ip|domain)|HELO should be|verification failed for|must resolve|your IP is (?:temporarily )?blocked|fake sender|bounce attacks?|\bFCrDNS\b|null senders?\b|(?:the domain of )?your (?:sender|from) address|verify "?From:?"? header|DNS (?:PTR|MX) resource|verification failed|barracuda reputation|\bSBRS\b|poor reputation|abuse|(?:EHLO|HELO) (?:argument|domain|name|hostname)|invalid (?:EHLO|HELO)|\b(?:EHLO|HELO)\b.{0,20}\b(?:does not match|invalid|not (?:valid|allowed|accepted)|rejected|forged|bogus|fake)|bounce messages? can have only one recipient|synchroni[sz]ation error|dictionary attack|directory harvest|\bip in (?:prison|jail)\b|\bDNS:NR\b|domain name required for sender|scored \d+(?:\.\d+)? points/i;
const GREYLIST =
  /gr[ea]y ?list|not yet authori[sz]ed to deliver mail from|intentional policy rejection, please try again later/i;
// Too many connections at once from us: about the receiver's connection slots, not its rate.
const CONNECTIONS =
  /too many (?:open |concurrent |simultaneous |smtp )*(?:connections|sessions|connected clients)|maximum number of (?:concurrent|simultaneous) (?:server )?connections|concurrent (?:smtp )?connections|max(?:imum)? connections (?:exceeded|reached)|maximum number of connections|concurrency limit|trop de connexions|connection (?:count )?limit (?:exceeded|reached)|\bHL:ICC\b|AUP#CXCNCT/i;
// Our addresses on a block list (DNSBL): about the IP pool we send from, at that receiver.
const LISTED =
  /block ?list|black ?list|\bDNSBLs?\b|\bRBL\b|spamhaus|blocked using|(?<!not )listed (?:in|on|at|by)|is listed|barracuda reputation|cloudmark|\b[SXP]BL\b|\[BL\d\d\]|\((?:BL|RBL)\)|sorbs|spamcop|abuseat|mail-abuse|black ip/i;
// One recipient receiving faster than its mailbox takes: only that recipient waits.
const RECIPIENT_RATE =
  /rate that prevents additional messages|receiving mail (?:at a rate|too quickly)|recipient (?:<[^>]*> )?has exceeded (?:their|the|its) (?:message )?(?:rate )?limit|can (?:send to this recipient|receive) per hour|exceeded message rate limit|too many recent messages|received too much email in a short period/i;
const SYSTEM =
  /temporary (?:system problem|failure|error|lookup failure|local problem|internal error|server error)|internal (?:server )?error|local error in processing|insufficient system (?:resources|storage)|system resources|service (?:not |temporarily )?(?:available|unavailable)|resources temporarily unavailable|too (?:much )?(?:load|busy)|service currently unavailable|server (?:is )?busy|all server ports are busy|out of memory|queue file write error|operating system error|configuration error|unable to read controls|shutting down|backend failure|mail system full|license expired|end message failed|come back later|upstream error|failed to be replicated|error on this server|temporary domain failure|\brDNS temporary failure|qqt failure|delivery (?:to the following recipients? )?(?:has been|is) delayed|hop count exceeded|too many hops|routing loop|mail loop|looping|received"? headers|still awaiting delivery|has been delayed|error in processing|unable to quarantine/i;
const TRY_LATER =
  /\btempfail\b|try again later|try again in|please try later|retry later|essayer plus tard|come back later|temporar(?:y|ily)\b/i;
const MAILBOX_FULL =
  /over ?quota|quota exceeded|exceeded (?:storage|the storage)|storage (?:quota|space|allocation)|out of storage|mailbox (?:is )?full|mailfolder is full|box is full|full mailbox|folder full|diskspace quota|(?:volume of )?recipient's mailbox exceeded|mailbox limit exceeded|postfach[^.]{0,40}\bvoll\b|storage full|quota exceed|inbox is full|mailbox exceeds|mailbox size limit|exceeds allowed size|disk quota|exhausted allowed storage|speichervolumen|too many messages on the server|too much mail (?:data|stored)|number of messages in recipient's mailbox|possible to save the message in the target mailbox|cannot update mailbox.*too large|exceed maximum mailbox size|quota violation|\bpleine\b|mailbox full/i;
const NO_RECIPIENT =
  /recipient ?not ?found|user unknown|unknown user|unknown recipient|no such (?:user|mailbox|recipient)|user (?:does not|doesn't) exist|(?:address|account|mailbox|recipient) (?:does not|doesn't) exist|doesn't have an? \S+ account|mailbox not found|mailbox unavailable|invalid (?:recipient|user|address|mailbox|final delivery userid)|addressee unknown|user not found|not listed in|no mailbox here|not our customer|is not a registered|unknown or illegal alias|no longer (?:valid|on server|available)|mailbox unallocated|recipient unknown|bad address syntax|address rejected: (?:user unknown|invalid|undeliverable)|not a valid (?:recipient|address)|(?:account|mailbox|user|address) (?:is |has been |was |currently )?(?:not active|inactive|disabled|deactivated|discontinued|suspended|frozen|blocked|locked or deactivated|archiv)|inactive email|compte du destinataire|destinataire invalide|archived recipient|recipient address rejected: (?:inactive|disabled|blocked)$|badrcptto|ResolverAdrRecipientNotFound|RecipientNotFound|dd This user|unrouteable address|previously bounced|bounced address|has a recent history of bouncing|^invalid$|disabled recipient|ad+ress unknown|no mailbox by that name|user \S+ does not exist|do(?:es)?s?n't exist|isn't allowed to receive|isn't a local account|account closed|ディレクトリには見つかりません|no valid recipients for this MM|banned recipient|marked as invalid|not a valid RFC-?5321 address|#5\.1\.0 Address rejected|need fully-qualified address|no account \S+ here|mailbox \(? ?\S+ ?\)? not found|deactivated mailbox|address no longer exists|(?:mail )?receiving disabled|malformed address|RCPT TO syntax error|reserved by RFC 2606|address is invalid|address couldn't be found|wasn't found at|not in (?:my|the) (?:valid ?rcpt ?to|recipient) list|not allowed to receive|mailbox is not allowed|bad[_ -]recipient\b|\bno (?:such )?(?:account|mail ?box|user|address|recipient)\b(?! (?:limit|quota|for sender))|not an? (?:active|known|valid|registered|existing|local) (?:user|address|account|mailbox|recipient|e-?mail)|not unique\. several matches|address unavailable|recipient verification failed|account (?:is )?unavailable/i;
const NO_DOMAIN =
  /domain (?:not found|does not exist|is not reachable)|no such domain|host (?:or domain name )?(?:unknown|not found)|host \S+ not found|couldn't find (?:any host|a mail exchanger)|unrouteable|null MX|no MX|\bNXDOMAIN\b|had no relevant answers|does not accept (?:e-?)?mail|indicated no SMTP service|illegal (?:host|MX)|invalid domain|InfoNoRecords|non-existent hosts|NoMxHost|domain in the e-?mail address|no MX or A\b|(?:unable|failed) to find (?:the )?MX|no mail host|domain \S+ does not exist|NonExistentDomain|InfoDomainNonexistent|unknown host\b/i;
const CONTENT =
  /header value|line (?:is )?too long|line length|malformed MIME|without (?:a )?To: fields?|character sets?\b|invalid (?:X-)?SMTPAPI header|from:? addresses? (?:are|is) not allowed|as a From: address|unsafe content|\bmacros?\b|content restrictions|file extension|subject is mandatory|size exceeded|by the (?:virus )?scanner|header not CRLF|(?:Date|From|Subject|Message-ID|To) header (?:is )?(?:too far|missing|invalid|malformed)|failed to parse (?:the )?message|error while rendering|message (?:size|length|too (?:large|big)|header size)|size (?:limit|exceeds)|too (?:large|big)|exceeds? (?:the )?(?:fixed )?(?:maximum|databytes)|request entity too large|virus|malware|infected|attachment|banned content|content presents|rfc ?(?:5322|2822|822)|not rfc|headers? (?:error|too large|is ridiculously|line is too long)|header (?:based|line)|multiple (?:from|subject)|missing a valid|message-id|disallowed header|encoded-word|8-bit data|bare (?:<?LF|line)|\bsmtplf\b|line limit|mime parts|resent-from|duplicate header|invalid characters|message content rejected|content rejected|not a valid address|does not contain a valid address|\bc=h[id]\b|addresses in From:|equal X-headers|length of (?:DATA|Attach)|policy violation detected \(AS345\)|maximum size|taille limite|invalid line ending|must be CRLF|file[_ ]extension|unicode e-?mail|SMTPUTF8|format restriction|viral\b|content blocked by/i;
// "Quota" that is a sending limit, not a mailbox's.
const NOT_A_MAILBOX =
  /queue quota|quota for sending|submission quota|send(?:ing)? quota|relay quota|with the same Message-ID/i;
// A spam verdict is policy, even when it also names the content (decision order 5).
const SPAM_VERDICT =
  /scored as spam|suspected spam|spam or virus|spam (?:detected|message|URL)|judged to be spam|\bUBE\b|anti-spoofing|blocked senders|considers this message spam/i;
const POLICY =
  /block|banned|denied|not allowed|not permitted|refused|reject|prohibit|not authori[sz]ed|unauthorized|local policy|policy|spam|relay|not accepted|forbidden|weren't sent|not configured to use this MX|same size mails|not a member|filtered|MX only|not welcome|cannot deliver mail for|unsubscribed|inappropriate|bounce message has|(?:do not|don't|does not) have permission|no permission|without permission|not subscribed/i;

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
  { id: 'net.no-response', status: 0, family: 'transient_system', permanent: false, answered: false, source: 'esp-protocols.md §1.3 (probe: refused connection, no $metadata.httpStatusCode)' },
  // Mailgun's SDK reports a refused or timed-out request as status 400 with the socket code.
  { id: 'http.network-error', channel: 'http', text: NETWORK, family: 'transient_system', permanent: false, source: 'esp-protocols.md §3.3 (probe: the SDK reports a refused connection as status 400)' },

  // ---- ESP APIs: specific names and wording before the status --------------------------
  // SES sends the daily quota under a throttling name; the text is what tells them apart.
  { id: 'http.daily-quota', channel: 'http', text: /daily message quota exceeded|maximum credits exceeded|messaging limits|daily (?:sending )?limit|message limit you set|package quota|plan (?:quota|limit)|per day limit|trial (?:mail )?sending limit/i, family: 'quota_exhausted', permanent: false, scope: 'provider', source: 'https://docs.aws.amazon.com/ses/latest/dg/manage-sending-quotas-errors.html' },
  // SES refuses an address it cannot parse; Postmark one it marked inactive (why, it does not say).
  { id: 'http.address-invalid', channel: 'http', text: /Local address contains illegal character|^InvalidParameterValue: Missing domain$/i, family: 'bad_recipient', permanent: true, source: 'https://github.com/hcengineering/platform/issues/7864' },
  { id: 'http.inactive-recipient', channel: 'http', text: /Missing final '@domain'/i, family: 'unknown', permanent: false, source: 'https://github.com/cloud-custodian/cloud-custodian/issues/885' },
  // Mailgun 420 "recipient limit exceeded, try again after <date>": a window, not a rate.
  { id: 'http.window-limit', channel: 'http', text: /\b(?:recipient|sending|message) limit exceeded\b/i, family: 'quota_exhausted', permanent: false, scope: 'provider', source: 'https://github.com/mailgun/mailgun-java/issues/50' },
  { id: 'http.throttle-name', channel: 'http', errorName: /^(?:TooManyRequestsException|LimitExceededException|ThrottlingException|Throttling)$/, family: 'throttled', permanent: false, scope: 'provider', source: 'https://github.com/pm-pmaas/etailors_amazon_ses/issues/117' },
  { id: 'http.rate-text', channel: 'http', text: /maximum sending rate exceeded|too many (?:requests|messages)|rate limit|sending limit \(hourly\)/i, family: 'throttled', permanent: false, scope: 'provider', source: 'https://www.twilio.com/docs/sendgrid/api-reference/how-to-use-the-sendgrid-v3-api/rate-limits' },
  { id: 'http.429', channel: 'http', status: 429, family: 'throttled', permanent: false, scope: 'provider', source: 'RFC 6585 §4 (429 Too Many Requests); esp-protocols.md §1–3' },
  // The account, not the message, is refused: temporary, so the worker marks the provider down.
  { id: 'http.account-halt-name', channel: 'http', errorName: /^(?:SendingPausedException|AccountSuspendedException|AccountSendingPausedException|UnrecognizedClientException)$/, family: 'sender_config', permanent: false, source: 'esp-protocols.md §1.3 (emulator fixture)' },
  { id: 'http.account-halt-text', channel: 'http', text: /sending (?:is )?paused|temporar(?:ily|y) block|account (?:is )?(?:suspended|disabled)/i, family: 'sender_config', permanent: false, source: 'https://github.com/GoodDollar/GoodServer/issues/419' },
  { id: 'http.mail-from-unverified', channel: 'http', errorName: /^MailFromDomainNotVerifiedException$/, family: 'sender_config', permanent: true, source: 'esp-protocols.md §1.3 (error table; SES gives no fixed message)' },
  { id: 'http.not-verified', channel: 'http', text: /not verified|verified sender identity/i, family: 'sender_config', permanent: true, source: 'https://github.com/mettle/sendportal/issues/94' },
  { id: 'http.sandbox-domain', channel: 'http', text: /sandbox subdomains|is not allowed to send|free accounts are for test purposes|authorized recipients|pending approval|sending limit \(sandbox\)/i, family: 'sender_config', permanent: true, source: 'https://github.com/sebsylvester/parse-server-mailgun/issues/14' },
  // SES refuses an address it already saw hard-bounce: the address is bad, not the message.
  { id: 'http.suppressed-address', channel: 'http', errorName: /^MessageRejected$/, text: /address blacklisted|hard bounce|suppression list/i, family: 'bad_recipient', permanent: true, source: 'https://github.com/emencia/emencia-django-newsletter/issues/61 ("Address blacklisted"); https://aws.amazon.com/blogs/ses/how-to-handle-a-throttling-maximum-sending-rate-exceeded-error' },
  // SparkPost refuses an address on its own suppression list: final through it, no verdict on the address.
  { id: 'http.esp-suppressed', channel: 'http', text: /suppressed due to (?:customer|system) policy|marked as inactive|inactive addresses/i, family: 'policy_block', permanent: true, source: 'github:anymail/django-anymail (SparkPost message generation rejection 1902)' },
  { id: 'http.recipient-field', channel: 'http', text: /personalizations\.\d+\.(?:to|cc|bcc)\.\d+\.email|'to' parameter is not a valid address|invalid '?to'? address|is an invalid email address|address is invalid in '?to'?/i, family: 'bad_recipient', permanent: true, source: 'https://github.com/mailgun/mailgun-js-boland/issues/199' },
  { id: 'http.5xx', channel: 'http', status: [500, 599], family: 'transient_system', permanent: false, answered: false, source: 'esp-protocols.md §1.3 (emulator fixture; SES gives no fixed message)' },
  // An API key or sender the ESP refuses under a 400 is our account's setting, not the message.
  { id: 'http.our-key-or-sender', channel: 'http', text: /\bapi ?key (?:is )?(?:invalid|missing|not valid|disabled|revoked)|invalid api ?key|valid sender (?:email|address) required|no sending domain|sender signature|unauthori[sz]ed sender|key not found|allowed IPs? list|not whitelisted|access denied/i, family: 'sender_config', permanent: true, source: 'github:anymail/django-anymail (Resend, Brevo and Postmark API errors in its tests)' },
  { id: 'http.401', channel: 'http', status: 401, family: 'sender_config', permanent: false, source: 'https://github.com/sendgrid/sendgrid-php/issues/793' },
  { id: 'http.403', channel: 'http', status: 403, family: 'sender_config', permanent: true, source: 'https://docs.customer.io/journeys/transactional-api-common-api-errors/' },
  { id: 'http.404', channel: 'http', status: 404, family: 'sender_config', permanent: true, source: 'https://github.com/mailgun/mailgun-ruby/issues/171' },
  // SendGrid: "Unavailable due to data residency restrictions".
  { id: 'http.451', channel: 'http', status: 451, family: 'sender_config', permanent: true, source: 'https://www.twilio.com/docs/sendgrid/api-reference/how-to-use-the-sendgrid-v3-api/errors' },
  { id: 'http.4xx', channel: 'http', status: [400, 499], family: 'content_rejected', permanent: true, source: 'https://www.twilio.com/docs/sendgrid/api-reference/how-to-use-the-sendgrid-v3-api/errors' },

  // ---- SMTP: our own relay or ESP account (sender_config is only ours) ------------------
  { id: 'smtp.ses-daily-quota', channel: 'smtp', text: /daily message quota exceeded|maximum credits exceeded|exceeded your messaging limits/i, family: 'quota_exhausted', permanent: false, scope: 'provider', source: 'https://docs.aws.amazon.com/ses/latest/dg/manage-sending-quotas-errors.html' },
  { id: 'smtp.ses-rate', channel: 'smtp', text: /maximum sending rate exceeded/i, family: 'throttled', permanent: false, scope: 'provider', source: 'https://docs.aws.amazon.com/ses/latest/dg/manage-sending-quotas-errors.html' },
  // Our login to the smarthost, its TLS demand, or the identity it lets us send as (RFC 4954 §6).
  { id: 'smtp.our-relay', channel: 'smtp', text: /must issue an? (?:AUTH|STARTTLS)|STARTTLS is required to send|authentication (?:is )?required|authentification requise|authentication (?:unsuccessful|failed)|incorrect authentication|invalid credentials|invalid logon|turn on SMTP authentication|client (?:was )?not authenticated to send|unauthenticated senders not allowed|SmtpClientAuthentication|application-specific password|log in via your web browser|not logged in|send mail as|does not advertise AUTH|does not support TLS|authentification invalide|is not allowed to send: (?:please activate|sandbox)|sandbox subdomains|local user only|smtp auth error|fail authentication|IP address is not allowed to send|not local sender|sender doesn't match|no sending domain|sender domain not verified|smtp auth required|failed login attempts|not available in Bridge|unknown sender address|OutboundSpamException|bad auth attempts|#AUTH\d{3}|TLS 1\.[01] and 1\.1 are not supported|support TLS 1\.2|account has been (?:temporarily )?suspended|\bXOAUTH\b|unusual sending activity|outgoing blocked|UnblockMe|message sending for this account is disabled|DT:SUM|bad outbound sender|tenant has exceeded|TenantAttribution|traffic not accepted from this IP|unregistered domains|spam abuse detected|mail sending denied|originating from your (?:account|address)\b|your account has been suspended|account is not yet activated|authenticate first|does not allow external forwarding|X-MSYS-API|Unconfigured Sending Domain|isn't allowed to send email|X-ApiKey|X-CampaignID|authentication failure|doesn't conform with authentication|non-local account|relay for one of the domains|registered in your Workspace SMTP Relay|daily relay quota|need (?:EHLO and )?AUTH|AUTH first|required for relay|must be authenticated|credentials no longer valid|re-?authenticate|auth(?:entication)? failures|please authenticate|blocked from sending/i, unless: /temporary authentication failure|relay quota|daily limit|relaying denied|\b(?:SPF|DKIM|DMARC)\b|RESOLVER\.RST/i, family: 'sender_config', permanent: false, source: 'github:MicrosoftDocs/SupportArticles-docs:Exchange/ExchangeOnline/email-delivery/ndr/non-delivery-reports-in-exchange-online.md' },
  // The identity we send as is not ours to use there: no retry fixes it until someone sets it up.
  { id: 'smtp.our-identity', channel: 'smtp', text: /verified sender identity|email address is not verified|not owned by (?:the )?(?:auth(?:enticated)? )?user|relaying disallowed as|mail from not owned|unauthorized use of sender|doesn't match AUTH domain|permissions to send as|SendAsDenied|not authorized to send from|not allowed to send from this address|must belong to (?:the )?authenticated user|from and auth not the same|(?:must be|should be) (?:the )?same as (?:the )?(?:authori[sz]ation|authenticated|login) user|authenticated user must be the same|does not belong to (?:the )?logged in user|authenticated user is not authori[sz]ed to send|used for authentication is different|cannot send mails? from this domain|policy set by your administrator|not authori[sz]ed to send from/i, family: 'sender_config', permanent: true, source: 'github:sisimai/set-of-emails:maildir/bsd/lhost-postfix-77.eml' },
  { id: 'smtp.our-relay-quota', channel: 'smtp', text: /daily (?:relay|user sending|SMTP relay) (?:quota|limit)|relay quota|daily limit for sending|SubmissionQuotaExceeded|submission quota|daily limit for message recipients|send quota exceeded/i, family: 'quota_exhausted', permanent: false, scope: 'provider', source: 'github:MicrosoftDocs/SupportArticles-docs:Exchange/ExchangeOnline/email-delivery/ndr/non-delivery-reports-in-exchange-online.md' },
  { id: 'smtp.auth-failed', channel: 'smtp', status: [530, 538], unless: /too (?:big|many)|size|exceeds/i, family: 'sender_config', permanent: false, source: 'https://github.com/dawidd6/action-send-mail/issues/82' },

  // ---- receivers' own rule sets (`receiver-rules.ts`): only for replies from that organisation --
  ...RECEIVER_ROWS,

  // A reply that lists several causes, or none, decides nothing (decision order 8).
  { id: 'smtp.bare-refusal', channel: 'smtp', unless: /^5\.1\.1 \S+ recipient address rejected$/i, text: /^(?:[245]\.\d+\.\d+ )?(?:<?\S+@\S+>?:? )?(?:recipient address |recipient )?(?:rejected|denied)\.?$|^recipient <\S+> denied$|denied temporarily|delivery failure policy error|服务器拒绝|recipient not in route list|^5\.2\.1 Mailbox not available$|^(?:[245]\.\d+\.\d+ )?Unable to deliver to <?\S+>?\.?$|delivery restricted by policy|^Request failed; Mailbox unavailable$|didn't specify the reason|^(?:[245]\.\d+\.\d+ )?command rejected\.?$|\bofr_513\b|^(?:[245]\.\d+\.\d+ )?(?:rejected|denied)(?: \([^)]*\))?\.?$|refused to accept your message(?: \(G\d+\))?\.?$/i, family: 'unknown', permanent: false, source: 'github:haraka/Haraka:connection.js' },
  { id: 'smtp.521-unavailable', channel: 'smtp', status: 521, text: /service currently unavailable/i, family: 'unknown', permanent: false, source: 'github:vdukhovni/postfix:postfix/src/postscreen/postscreen.c' },
  { id: 'smtp.undecided', channel: 'smtp', text: /\bor (?:the )?recipient'?s? mailbox is full|unable to get mx info|\bsender or recipients\b|\bmay not exist\b.*\bmay be\b|mailbox unavailable or access denied|security level check failed|^(?:[245]\.\d+\.\d+ )?policy reason$/i, family: 'unknown', permanent: false, source: 'github:sisimai/set-of-emails:maildir/bsd/lhost-exim-31.eml' },
  // ---- expiry with a last error: read the error (decision order 7) -----------------------
  { id: 'smtp.expired-network', channel: 'smtp', text: /(?:expired|too old|retry timeout exceeded|giving up|could not be delivered for).*(?:connection (?:timed out|refused)|timeout|unable to connect|cannot connect|can't connect)/i, family: 'transient_system', permanent: false, source: 'github:sisimai/set-of-emails:maildir/bsd/lhost-office365-08.eml' },

  // ---- greylisting passes on the next try, whatever code carries it -----------------------
  { id: 'smtp.greylist', channel: 'smtp', text: GREYLIST, family: 'greylisted', permanent: false, source: 'github:schweikert/postgrey:postgrey' },

  // ---- a mailbox that will come back (before volume: "over quota temporarily") -------------
  { id: 'smtp.mailbox-temporary', channel: 'smtp', text: /(?:mailbox|user|recipient|account)\b.{0,40}\b(?:locked|quota|unavailable|full)\b.{0,20}\b(?:temporar|try again)|temporary failure.{0,40}quota|recipient temporarily unavailable|box is busy|recipient error\. please try again|^\S*(?:@|email)\S* temporarily unavailable|(?<!ip |your |sender )(?:mailbox|user|recipient|account|address|incoming)\b(?:(?!service|server|system|too fast|blocked)[^]){0,40}\btemporar(?:ily|y)\b.{0,20}\b(?:unavailable|suspended|disabled|locked|inactive|not available)|file has been locked|(?:postponed|delayed|deferred)\b.{0,40}\b(?:full|quota)|(?:full|quota)\b.{0,60}\bwill (?:continue to )?(?:try|retry)/i, family: 'mailbox_temporary', permanent: false, source: 'github:sisimai/set-of-emails:maildir/bsd/lhost-amazonses-19.eml' },

  // ---- the mailbox ------------------------------------------------------------------------
  { id: 'smtp.mailbox-full-4xx', channel: 'smtp', status: [400, 499], text: MAILBOX_FULL, unless: NOT_A_MAILBOX, family: 'mailbox_temporary', permanent: false, source: 'github:ActiveCampaign/smtp-field-manual:data/codes/452.json' },
  { id: 'smtp.mailbox-full', channel: 'smtp', text: MAILBOX_FULL, unless: NOT_A_MAILBOX, family: 'mailbox_full', permanent: true, source: 'github:ActiveCampaign/smtp-field-manual:data/codes/552.json' },

  // ---- volume-driven limits: throttled, whatever the class (decision orders 1–3) -----------
  // A daily, monthly or plan limit is a quota, an hour or less a rate.
  { id: 'smtp.daily-quota', channel: 'smtp', text: /(?:daily|per day|monthly|24[- ]hours?) (?:\w+ ){0,3}(?:quota|limit|rate)|quota for sending|within 24 hours|limit \(daily\)|exceeded for today|outmail quota|past 24 ?h(?:ours)?\b|\bper ?day\b|package quota|plan (?:quota|limit)/i, unless: /Message-ID/i, family: 'quota_exhausted', permanent: false, scope: 'receiver', source: 'https://puffinknight.tistory.com/102' },
  { id: 'smtp.connections', channel: 'smtp', text: CONNECTIONS, unless: /per (?:minute|hour|second)|frequency/i, family: 'throttled', permanent: false, scope: 'connections', source: 'github:fm/smtp-codes:data/codes/421.json' },
  { id: 'smtp.recipient-rate', channel: 'smtp', text: RECIPIENT_RATE, family: 'throttled', permanent: false, scope: 'recipient', source: 'github:ActiveCampaign/smtp-field-manual:data/codes/450.json' },
  // A limit whose stated cause is the sender (complaints with no volume, authentication,
  // reputation) is a reputation deferral below, even when worded "rate limited".
  { id: 'smtp.volume', channel: 'smtp', text: VOLUME, unless: /bounce message has|reputation ratelimit|blocked for the day|invalid recipients|temporarily blocked for attempting|due to (?:ip )?reputation|because (?:SPF|DKIM|the From|this message wasn't|there is no DMARC)|rate limited because|(?:DMARC|SPF|DKIM|TLS)\b.{0,60}rate limited|too much spam|untrusted IP/i, family: 'throttled', permanent: false, scope: 'receiver', source: 'github:vdukhovni/postfix:postfix/src/smtpd/smtpd.c' },
  { id: 'smtp.gmail-same-message-id', channel: 'smtp', text: /exceeded its quota for sending messages with the same Message-ID|Multiple destination domains per transaction|Domain policy size per transaction|Recipients belong to multiple regions|Peak SMTP relay limit/i, family: 'throttled', permanent: false, scope: 'receiver', source: 'github:sisimai/go-sisimai:rhost/for-google.go' },
  { id: 'smtp.too-many-recipients-code', channel: 'smtp', enhanced: /^[45]\.5\.3$/, unless: /\b(?:SPF|DKIM|DMARC)\b|welcome|cannot receive|not allowed/i, family: 'throttled', permanent: false, scope: 'receiver', source: 'RFC 3463 §3.6 (X.5.3 too many recipients); https://support.google.com/a/answer/3726730 (452 4.5.3)' },

  // ---- DNS trouble on either side: the receiver's (try again) or its check of our sender ----
  { id: 'smtp.temporary-lookup', channel: 'smtp', text: /temporary lookup failure|temporary error occurred during|temporary \w+ DNS lookup failure|rDNS Temporary Failure|SuspiciousRemoteServer|host not found, try again|malformed or unexpected name server reply|host name lookup failure|(?:hosts?|MXs?)(?: for this domain)? could (?:not )?be reached|unable to perform (?:DMARC|SPF|DKIM) (?:verification|checks?)|lookup timed? ?out|DNS (?:lookup )?timeout|temporary domain failure/i, family: 'transient_system', permanent: false, source: 'github:sisimai/set-of-emails:maildir/bsd/lhost-postfix-17.eml' },
  { id: 'smtp.dns-lookup-4xx', channel: 'smtp', status: [400, 499], text: /DNS look-?up/i, family: 'reputation_deferral', permanent: false, scope: 'receiver', source: 'http://worldnet.att.net/general-info/bls_info/block_enduser.html' },

  // ---- a block-list listing of our IPs: that receiver's circuit for the pool (decision order 4) --
  { id: 'smtp.listed-4xx', channel: 'smtp', status: [400, 499], text: LISTED, unless: /temporary (?:lookup )?(?:failure|error)/i, family: 'reputation_deferral', permanent: false, scope: 'pool', source: 'github:openbsd/src:libexec/spamd/spamd.c' },
  { id: 'smtp.listed-5xx', channel: 'smtp', status: [500, 599], text: LISTED, unless: /temporarily|file extension|attachment/i, family: 'policy_block', permanent: true, scope: 'pool', source: 'github:ActiveCampaign/smtp-field-manual:data/codes/550.json' },

  // ---- the sender's causes (decision orders 1, 4 and 5) -----------------------------------
  { id: 'smtp.sender-cause-4xx', channel: 'smtp', status: [400, 499], text: SENDER_CAUSE, unless: /too many errors|end message failed|error in processing|signing failed|recipient verification failed|unverified address/i, family: 'reputation_deferral', permanent: false, scope: 'receiver', source: 'github:sisimai/go-sisimai:rhost/for-google.go' },
  { id: 'smtp.policy-4xx', channel: 'smtp', status: [400, 499], text: /policy violation|reject(?:ed)? due to policy|for policy reasons/i, family: 'reputation_deferral', permanent: false, scope: 'receiver', source: 'https://new-faq.comservice-ffo.de/smtp-fehlermeldungen-e-mail-fehler/' },
  { id: 'smtp.rate-limited-4xx', channel: 'smtp', status: [400, 499], text: /rate limited|deferred due to|whitelist/i, family: 'reputation_deferral', permanent: false, scope: 'receiver', source: 'github:sisimai/go-sisimai:rhost/for-google.go' },
  // A rate limit whose stated cause is our reputation, sent as 5xx: a deferral all the same (decision order 1).
  { id: 'smtp.reputation-rate-5xx', channel: 'smtp', status: [500, 599], text: /reputation.{0,20}rate ?limit|rate ?limit(?:ed)? (?:due to|because of) (?:ip |poor |low )?reputation/i, family: 'reputation_deferral', permanent: false, scope: 'receiver', source: 'https://github.com/hitobito/hitobito/issues/953 (Bluewin sc969)' },
  // Text over code (decision order 6): a 5xx that says "temporarily" about the sender.
  { id: 'smtp.sender-cause-temporary-5xx', channel: 'smtp', status: [500, 599], text: /temporarily (?:blocked|rejected|deferred)/i, family: 'reputation_deferral', permanent: false, scope: 'receiver', source: 'issue 15 decision order 6 (text over code)' },

  // ---- content (decision order 5): size, virus, format --------------------------------------
  // A bare line feed is the message's own bytes: no retry of the same message passes, whatever the class.
  { id: 'smtp.bare-lf', channel: 'smtp', text: /bare (?:<?LF\b|line-?feed)|\bsmtplf\b|invalid line ending|line delimiter must be CRLF/i, family: 'content_rejected', permanent: true, finalEvenAs4xx: true, source: 'github:notqmail/notqmail:qmail-smtpd.c; github:haraka/Haraka:connection.js' },
  { id: 'smtp.content', channel: 'smtp', text: CONTENT, unless: SPAM_VERDICT, family: 'content_rejected', permanent: true, source: 'github:sisimai/go-sisimai:rhost/for-google.go' },
  { id: 'smtp.content-code', channel: 'smtp', status: [500, 599], enhanced: /^5\.(?:6\.\d{1,3}|3\.4|2\.3)$/, unless: /spam|policy|sender ip/i, family: 'content_rejected', permanent: true, source: 'github:sisimai/go-sisimai:rhost/for-google.go' },

  // ---- the sender checked by the receiver, refused (decision order 4) -----------------------
  // The sender's domain checked by the receiver is policy, not our recipient's.
  { id: 'smtp.sender-cause-5xx', channel: 'smtp', status: [500, 599], text: SENDER_CAUSE, unless: /recipient (?:address )?rejected: (?:user unknown|invalid)|recipient verification failed/i, family: 'policy_block', permanent: true, source: 'github:ActiveCampaign/smtp-field-manual:data/codes/550.json' },

  // ---- the receiver's own trouble ----------------------------------------------------------
  { id: 'smtp.network', channel: 'smtp', text: NETWORK, unless: /^retry timeout exceeded\.?$|spam/i, family: 'transient_system', permanent: false, source: 'github:sisimai/set-of-emails:maildir/bsd/lhost-exim-08.eml' },
  { id: 'smtp.system', channel: 'smtp', text: SYSTEM, unless: /no such|not found|NXDOMAIN|host unknown/i, family: 'transient_system', permanent: false, source: 'github:ActiveCampaign/smtp-field-manual:data/codes/451.json' },

  // ---- a 5xx the receiver says to retry (decision order 6) ----------------------------------
  { id: 'smtp.try-later-5xx', channel: 'smtp', status: [500, 599], text: TRY_LATER, unless: /retrying will not succeed/i, family: 'transient_system', permanent: false, source: 'https://github.com/jstedfast/MailKit/issues/968' },

  // ---- the address and the domain -------------------------------------------------------
  // Before the recipient wording: Postfix says "Recipient address rejected: Domain not found".
  // 5.1.7 and 5.1.8 are about our sender's address, whatever the text says of a domain.
  { id: 'smtp.sender-code', channel: 'smtp', status: [500, 599], enhanced: /^5\.1\.[78]$/, family: 'policy_block', permanent: true, source: 'github:sisimai/set-of-emails:maildir/bsd/lhost-exim-50.eml' },
  { id: 'smtp.bad-domain-4xx', channel: 'smtp', status: [400, 499], text: NO_DOMAIN, family: 'unknown', permanent: false, source: 'github:vdukhovni/postfix:postfix/src/smtpd/smtpd_nullmx.ref' },
  { id: 'smtp.bad-domain-text', channel: 'smtp', text: NO_DOMAIN, family: 'bad_domain', permanent: true, source: 'github:sisimai/set-of-emails:maildir/bsd/lhost-messagingserver-10.eml' },
  // A 4xx about the address is the receiver choosing to defer: retried, never suppressed on it.
  { id: 'smtp.bad-recipient-4xx', channel: 'smtp', status: [400, 499], text: NO_RECIPIENT, unless: /policy|sender address|or access denied|from you|from this sender/i, family: 'mailbox_temporary', permanent: false, source: 'github:sisimai/set-of-emails:maildir/bsd/lhost-postfix-05.eml' },
  { id: 'smtp.bad-recipient-text', channel: 'smtp', text: NO_RECIPIENT, unless: /policy|sender address|or access denied|from you|from this sender/i, family: 'bad_recipient', permanent: true, source: 'github:ActiveCampaign/smtp-field-manual:data/codes/550.json' },
  { id: 'smtp.bad-domain-code', channel: 'smtp', status: [500, 599], enhanced: /^5\.1\.(?:2|10)$/, family: 'bad_domain', permanent: true, source: 'github:sisimai/go-sisimai:rhost/for-google.go' },
  { id: 'smtp.bad-mailbox-code', channel: 'smtp', status: [500, 599], enhanced: /^5\.(?:1\.[1346]|2\.1)$/, unless: /will not accept|block|banned|denied|spam|policy|relay|not authori|unauthori|prohibit|refused|not subscribed|subscribe/i, family: 'bad_recipient', permanent: true, source: 'github:sisimai/set-of-emails:maildir/bsd/lhost-exchange2007-01.eml' },

  // ---- the second reading (`reply-lexicon.ts`): words near each other, for wording no row above names ----
  { id: 'smtp.near.recipient', channel: 'smtp', text: RECIPIENT_GONE, unless: new RegExp(`${NOT_THE_RECIPIENT.source}|policy|denied|blocked|refused|temporar|try again|later|${EITHER.source}`, 'i'), family: 'bad_recipient', permanent: true, source: 'reply-lexicon.ts (the second reading; from the wording of set 5, 2026-12-03)' },
  { id: 'smtp.near.mailbox-full', channel: 'smtp', text: MAILBOX_OVER, unless: NOT_A_FULL_MAILBOX, family: 'mailbox_full', permanent: true, source: 'reply-lexicon.ts (the second reading; from the wording of set 5, 2026-12-03)' },
  { id: 'smtp.near.window-limit', channel: 'smtp', text: WINDOW_LIMIT, unless: /Message-ID|size/i, family: 'quota_exhausted', permanent: false, scope: 'receiver', source: 'reply-lexicon.ts (the second reading; from the wording of set 5, 2026-12-03)' },
  { id: 'smtp.near.volume', channel: 'smtp', text: TOO_MUCH_TRAFFIC, unless: NOT_VOLUME, family: 'throttled', permanent: false, scope: 'receiver', source: 'reply-lexicon.ts (the second reading; from the wording of set 5, 2026-12-03)' },
  { id: 'smtp.near.content', channel: 'smtp', text: MESSAGE_UNFIT, unless: NOT_CONTENT, family: 'content_rejected', permanent: true, source: 'reply-lexicon.ts (the second reading; from the wording of set 5, 2026-12-03)' },
  { id: 'smtp.near.system', channel: 'smtp', text: RECEIVER_TROUBLE, unless: NOT_SYSTEM, family: 'transient_system', permanent: false, source: 'reply-lexicon.ts (the second reading; from the wording of set 5, 2026-12-03)' },

  // ---- policy (decision orders 4 and 5) ----------------------------------------------------
  { id: 'smtp.policy-text', channel: 'smtp', status: [500, 599], text: POLICY, family: 'policy_block', permanent: true, source: 'github:ActiveCampaign/smtp-field-manual:data/codes/550.json' },
  { id: 'smtp.policy-code', channel: 'smtp', status: [500, 599], enhanced: /^5\.7\.\d{1,3}$/, family: 'policy_block', permanent: true, source: 'github:MicrosoftDocs/SupportArticles-docs:Exchange/ExchangeOnline/email-delivery/ndr/non-delivery-reports-in-exchange-online.md' },

  // ---- the status class ---------------------------------------------------------------------
  { id: 'smtp.mailbox-4xx', channel: 'smtp', status: [400, 499], enhanced: /^4\.2\.\d{1,3}$/, unless: /^(?:4\.2\.\d{1,3} )?please try again later\.?(?: \([^)]*\))?$/i, family: 'mailbox_temporary', permanent: false, source: 'https://www.bytecamp.net/de/faq/email/zustellen.html' },
  { id: 'smtp.4xx', channel: 'smtp', status: [400, 499], unless: /(?:message|delivery) expired|unable to deliver this message after|too many errors|TLS required|mailbox delivery restricted|Open relay|Requested action aborted \[|TLS\/SSLv3/i, family: 'transient_system', permanent: false, source: 'github:sisimai/set-of-emails:maildir/bsd/lhost-qmail-07.eml' },
  // nodemailer too treats 503 (bad sequence) as not permanent: it is our session, not the mail.
  { id: 'smtp.503', channel: 'smtp', status: 503, unless: /send HELO|RCPT first|cannot receive/i, family: 'transient_system', permanent: false, source: 'RFC 5321 §4.2.4 (503 bad sequence of commands); nodemailer treats 503 as not permanent' },

  // ---- nothing else said anything: temporary, with the low cap of its own family -----
  { id: 'fallback.unknown', family: 'unknown', permanent: false, source: 'issue 15 decision order 8' },
];
