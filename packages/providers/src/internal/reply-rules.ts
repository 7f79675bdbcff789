import type { Family, ThrottleScope } from './reply-types.js';

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
  readonly scope?: ThrottleScope;
  /** `false`: the provider gave no answer about the message (nothing came back, or its own server failed). */
  readonly answered?: false;
}

// Wording shared by several rows. Rate wording is checked before the status class because
// receivers send it with 4xx and 5xx alike, and a "slow down" is never a reason to give up.
const RATE =
  /rate ?limit|rate that prevents|unusual rate|too many (?:connections|messages|emails|sessions)|too (?:quickly|fast|frequent)|throttl|slow down|excessive volume|(?:sending|submission) rate|temporarily deferred|wait to send more/i;
// A 5xx that names the sender as blocked is a verdict on the sender, even with rate wording.
const BLOCKED = /\bblocked\b|\bbanned\b|blacklist|block ?list|\bdenied\b/i;
const NETWORK =
  /\b(?:ECONNREFUSED|ECONNRESET|ECONNABORTED|ETIMEDOUT|ENOTFOUND|EAI_AGAIN|EHOSTUNREACH|ENETUNREACH|EPIPE)\b/;
const AUTH =
  /\b(?:DMARC|SPF|DKIM)\b|unauthenticated|authentication (?:information|checks?)|sender identity|not verified/i;
const INACTIVE = /\b(?:account|mailbox|user)\b.{0,60}\b(?:inactive|disabled|deactivated)\b/i;
const MAILBOX_FULL = /over quota|quota exceeded|mailbox (?:is )?full|insufficient (?:system )?storage/i;
const NO_RECIPIENT =
  /recipient ?not ?found|user unknown|unknown user|no such (?:user|mailbox)|does not exist|doesn't have an? \S+ account|mailbox unavailable|mailbox not found|invalid recipient|address rejected|addressee unknown/i;
const NO_DOMAIN =
  /domain not found|no such domain|host unknown|host not found|unrouteable|null MX|no MX|does not accept mail/i;
const POLICY =
  /block ?list|blacklist|\bblocked\b|\bbanned\b|\bspam\b|not authori[sz]ed|access denied|local policy|policy reasons/i;
const SIZE =
  /message size|size limits?|too (?:large|big)|exceeds? (?:the )?(?:maximum|fixed maximum) (?:message )?size/i;

// One row a line, so the table reads as a table (prettier would spread each row over seven).
// prettier-ignore
/**
 * The reply classifier's table (bump `CLASSIFIER_VERSION` with any change). Sources of the
 * wording: esp-protocols.md §1.3, §2.3, §3.3, §5.4–§6, and the
 * fixtures in `test/fixtures/replies.ts`, each of which names where its text was published.
 */
export const RULES: readonly ReplyRule[] = [
  // ---- no answer at all --------------------------------------------------------------
  { id: 'net.no-response', status: 0, family: 'transient_system', permanent: false, answered: false },
  // Mailgun's SDK reports a refused or timed-out request as status 400 with the socket code.
  { id: 'http.network-error', channel: 'http', text: NETWORK, family: 'transient_system', permanent: false },

  // ---- ESP APIs: specific names and wording before the status --------------------------
  // SES sends the daily quota under a throttling name; the text is what tells them apart.
  { id: 'http.daily-quota', channel: 'http', text: /daily message quota exceeded/i, family: 'quota_exhausted', permanent: false, scope: 'provider' },
  // Mailgun 420 "recipient limit exceeded, try again after <date>": a window, not a rate.
  { id: 'http.window-limit', channel: 'http', text: /\b(?:recipient|sending|message) limit exceeded\b/i, family: 'quota_exhausted', permanent: false, scope: 'provider' },
  { id: 'http.throttle-name', channel: 'http', errorName: /^(?:TooManyRequestsException|LimitExceededException|ThrottlingException|Throttling)$/, family: 'throttled', permanent: false, scope: 'provider' },
  { id: 'http.rate-text', channel: 'http', text: /maximum sending rate exceeded|too many (?:requests|messages)|rate limit/i, family: 'throttled', permanent: false, scope: 'provider' },
  { id: 'http.429', channel: 'http', status: 429, family: 'throttled', permanent: false, scope: 'provider' },
  // The account, not the message, is refused: temporary, so the worker marks the provider down.
  { id: 'http.account-halt-name', channel: 'http', errorName: /^(?:SendingPausedException|AccountSuspendedException|AccountSendingPausedException|UnrecognizedClientException)$/, family: 'sender_config', permanent: false },
  { id: 'http.account-halt-text', channel: 'http', text: /sending (?:is )?paused|temporar(?:ily|y) block|account (?:is )?(?:suspended|disabled)|maximum credits exceeded/i, family: 'sender_config', permanent: false },
  { id: 'http.mail-from-unverified', channel: 'http', errorName: /^MailFromDomainNotVerifiedException$/, family: 'sender_config', permanent: true },
  { id: 'http.not-verified', channel: 'http', text: /not verified|verified sender identity/i, family: 'sender_config', permanent: true },
  { id: 'http.sandbox-domain', channel: 'http', text: /sandbox subdomains|is not allowed to send/i, family: 'sender_config', permanent: true },
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

  // ---- SMTP: the SES endpoint speaks for the provider, not a receiver --------------------
  { id: 'smtp.ses-daily-quota', channel: 'smtp', text: /daily message quota exceeded/i, family: 'quota_exhausted', permanent: false, scope: 'provider' },
  { id: 'smtp.ses-rate', channel: 'smtp', text: /maximum sending rate exceeded/i, family: 'throttled', permanent: false, scope: 'provider' },

  // ---- SMTP 4xx wording that says more than "later" -----------------------------------
  // Greylisting passes on the next try, whatever code carries it (Stalwart uses 4.2.2).
  { id: 'smtp.greylist', channel: 'smtp', status: [400, 499], text: /gr[ea]y ?list/i, family: 'greylisted', permanent: false },
  // Before rate wording: Microsoft's 4.7.650 says "rate limited due to IP reputation".
  { id: 'smtp.reputation', channel: 'smtp', status: [400, 499], text: /reputation|complaints/i, family: 'reputation_deferral', permanent: false, scope: 'receiver' },
  // Before rate wording, which also says "too many": splitting the batch is the only fix.
  { id: 'smtp.too-many-recipients', channel: 'smtp', status: [400, 599], enhanced: /^[45]\.5\.3$/, family: 'content_rejected', permanent: true },
  { id: 'smtp.too-many-recipients-text', channel: 'smtp', status: [400, 599], text: /too many recipients/i, family: 'content_rejected', permanent: true },
  { id: 'smtp.rate-text-4xx', channel: 'smtp', status: [400, 499], text: RATE, family: 'throttled', permanent: false, scope: 'receiver' },
  // Some receivers answer "too fast" with 5xx; the wording wins unless it also says blocked.
  { id: 'smtp.rate-text-5xx', channel: 'smtp', status: [500, 599], text: RATE, unless: BLOCKED, family: 'throttled', permanent: false, scope: 'receiver' },
  { id: 'smtp.system-problem', channel: 'smtp', status: [400, 499], text: /temporary system problem|internal server error|local error in processing/i, family: 'transient_system', permanent: false },
  // A policy-class deferral asking to come back later is the receiver pacing us (Gmail
  // 421 4.7.0 "Try again later, closing connection", Microsoft 451 4.7.500 "Server busy").
  { id: 'smtp.policy-try-later', channel: 'smtp', status: [400, 499], enhanced: /^4\.7\.\d{1,3}$/, text: /try again later/i, family: 'throttled', permanent: false, scope: 'receiver' },
  { id: 'smtp.mailbox-full-4xx', channel: 'smtp', status: [400, 499], text: MAILBOX_FULL, family: 'mailbox_temporary', permanent: false },
  { id: 'smtp.mailbox-4xx', channel: 'smtp', status: [400, 499], enhanced: /^4\.2\.\d{1,3}$/, family: 'mailbox_temporary', permanent: false },
  { id: 'smtp.4xx', channel: 'smtp', status: [400, 499], family: 'transient_system', permanent: false },

  // ---- SMTP 5xx ----------------------------------------------------------------------
  // Our own login to the smarthost failed: the account, not the message (RFC 4954 §6).
  { id: 'smtp.auth-failed', channel: 'smtp', status: [530, 535], enhanced: /^5\.7\.[08]$/, family: 'sender_config', permanent: false },
  // Authentication before 5.7.x: Apple rejects DMARC failures with 5.7.1.
  { id: 'smtp.sender-auth-code', channel: 'smtp', status: [500, 599], enhanced: /^5\.7\.2[67]$/, family: 'sender_config', permanent: true },
  { id: 'smtp.sender-auth-text', channel: 'smtp', status: [500, 599], text: AUTH, family: 'sender_config', permanent: true },
  { id: 'smtp.bad-sender-code', channel: 'smtp', status: [500, 599], enhanced: /^5\.1\.[78]$/, family: 'sender_config', permanent: true },
  { id: 'smtp.bad-mailbox-code', channel: 'smtp', status: [500, 599], enhanced: /^5\.1\.1$/, family: 'bad_recipient', permanent: true },
  // "Over quota and inactive" is a dead mailbox, not a full one.
  { id: 'smtp.inactive-mailbox', channel: 'smtp', status: [500, 599], text: INACTIVE, family: 'bad_recipient', permanent: true },
  { id: 'smtp.mailbox-disabled-code', channel: 'smtp', status: [500, 599], enhanced: /^5\.2\.1$/, family: 'bad_recipient', permanent: true },
  // A full mailbox empties; a 5xx for it is retried within the family's cap, never suppressed.
  { id: 'smtp.mailbox-full-5xx', channel: 'smtp', status: [500, 599], text: MAILBOX_FULL, family: 'mailbox_temporary', permanent: false },
  { id: 'smtp.mailbox-full-code', channel: 'smtp', status: [500, 599], enhanced: /^5\.2\.2$/, family: 'mailbox_temporary', permanent: false },
  // 5.7.x is a verdict on the sender or message, never proof that the address is bad.
  { id: 'smtp.policy-code', channel: 'smtp', status: [500, 599], enhanced: /^5\.7\.\d{1,3}$/, family: 'policy_block', permanent: true },
  // Before the recipient wording: Postfix says "Recipient address rejected: Domain not found".
  { id: 'smtp.bad-domain-text', channel: 'smtp', status: [500, 599], text: NO_DOMAIN, family: 'bad_domain', permanent: true },
  // Before 5.1.10: Microsoft uses it for "RecipientNotFound", RFC 7505 for a null MX.
  { id: 'smtp.bad-recipient-text', channel: 'smtp', status: [500, 599], text: NO_RECIPIENT, family: 'bad_recipient', permanent: true },
  { id: 'smtp.bad-domain-code', channel: 'smtp', status: [500, 599], enhanced: /^5\.1\.(?:2|10)$/, family: 'bad_domain', permanent: true },
  { id: 'smtp.bad-address-code', channel: 'smtp', status: [500, 599], enhanced: /^5\.1\.[3-6]$/, family: 'bad_recipient', permanent: true },
  { id: 'smtp.content-code', channel: 'smtp', status: [500, 599], enhanced: /^5\.(?:6\.\d{1,3}|3\.4|2\.3)$/, family: 'content_rejected', permanent: true },
  { id: 'smtp.size-text', channel: 'smtp', status: [500, 599], text: SIZE, family: 'content_rejected', permanent: true },
  { id: 'smtp.policy-text', channel: 'smtp', status: [500, 599], text: POLICY, family: 'policy_block', permanent: true },
  // nodemailer too treats 503 (bad sequence) as not permanent: it is our session, not the mail.
  { id: 'smtp.503', channel: 'smtp', status: 503, family: 'transient_system', permanent: false },

  // ---- nothing else said anything: temporary, with the low cap of its own family -----
  { id: 'fallback.unknown', family: 'unknown', permanent: false },
];
