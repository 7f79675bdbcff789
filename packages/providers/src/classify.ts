/**
 * Reply classification in one place (docs/design/delivery-and-replies.md): a versioned rule table over
 * the status, the enhanced status code (RFC 3463) and the full reply text.
 */
import { BUILT_IN_ORGANISATIONS, compileOrganisations } from '@sluice/core';
import { RECEIVER_ALIASES, RECEIVER_MARKS, RECEIVER_RULES } from './internal/receiver-rules.js';
import {
  ABOUT_THE_SENDER,
  A_DAY_OR_LONGER,
  NOT_A_SENDING_LIMIT,
  NOT_TRAFFIC_LIMIT,
  SAYS_FINAL,
  SAYS_NOT_FINAL,
  SENDING_QUOTA,
  TRAFFIC_LIMIT,
  WINDOW_LIMIT,
} from './internal/reply-lexicon.js';
import { RULES } from './internal/reply-rules.js';
import { FAMILIES, type Family, type ReplyRule, type ReplyScope, type ThrottleScope } from './internal/reply-types.js';

export { FAMILIES, RECEIVER_RULES, RULES, type Family, type ReplyRule, type ReplyScope, type ThrottleScope };

/** Bumped whenever a rule changes; recorded with every attempt. */
export const CLASSIFIER_VERSION = '2026.12.03-32';

/** A reply as an adapter saw it, before classification. */
export interface Reply {
  /** `smtp` for a receiver's or smarthost's SMTP reply; `http` for an ESP API answer. */
  channel: 'smtp' | 'http';
  /** SMTP basic code (421, 550…) or HTTP status. */
  status: number;
  /** The full reply text: every line of an SMTP reply, or the ESP's error name and message. */
  text: string;
  /** HTTP response headers (lower-case names), where the SDK exposes them. */
  headers?: Readonly<Record<string, string | undefined>>;
  /** HTTP: the SDK's error name (`TooManyRequestsException`, `MessageRejected`…). */
  errorName?: string;
  /**
   * The receiving organisation the message was for, when known (`google`, `microsoft`… as
   * `packages/core`'s organisations name them): its own rules are read first. The text's own
   * marks (`gsmtp`, `[TSS04]`, `OFR_…`) name it too when this is absent.
   */
  receiver?: string;
  /** The host that answered (an MX host), when known: names the organisation as its MX does. */
  host?: string;
}

/** What the rule table says about a reply. */
export interface Classification {
  family: Family;
  /** Never retried. */
  permanent: boolean;
  /** Only `bad_recipient` and `bad_domain` suppress the address. */
  suppress: boolean;
  /**
   * What the reply is about, where it is acted on: a rate (HTTP 429 → the provider; SMTP 421
   * 4.7.28 → the receiver; 450 4.2.1 → one recipient), or the IP pool (a block-list listing).
   */
  scope?: ReplyScope;
  /** The reply's own hint, ms from now: `Retry-After`, `X-RateLimit-Reset`, "try again in N seconds". */
  retryAfterMs?: number;
  /** The enhanced status code found in the text, e.g. `5.1.1`. */
  enhanced?: string;
  /**
   * Whether the provider answered about the message: false when nothing came back at all
   * (no response, connection refused or lost) or when its own server failed (HTTP 5xx).
   * The worker counts those towards marking the provider down (`failover.downAfter`).
   */
  answered: boolean;
  /** The id of the rule that matched. */
  rule: string;
  version: string;
}

/** The longest wait a reply's hint may impose; anything longer is a typo or a ban, not a pace. */
export const MAX_HINT_MS = 24 * 60 * 60 * 1000;

/** Not a section number (`RFC 5321 4.5.3.1.6`, `#4.5.3.1`): no digit or dot either side. */
const ENHANCED = /(?<![\d.])([245])\.(\d{1,3})\.(\d{1,3})(?![.\d])/;
const BASIC_PREFIX = /^\s*\d{3}[- ]/;
const LEADING_ENHANCED = /^\s*[245]\.\d{1,3}\.\d{1,3}\s+/;
/**
 * What others wrap a receiver's reply in when they pass it on: a DSN's or an ESP event's
 * `smtp;` (its Diagnostic-Code), Postfix's `host mx.example.net[192.0.2.1] said: … (in reply
 * to RCPT TO command)`, "Remote host said:". The reply is read without them, so a row written
 * for the receiver's own words reads them wherever they were quoted, and no address in the
 * wrapper passes for an enhanced code.
 */
const WRAPPER_PREFIX =
  /^\s*(?:Diagnostic-Code:\s*|smtp\s*;\s*|Remote (?:host|server) said:\s*|(?:<[^>\s]+>:?\s*)?host(?: \S+)?(?: ?\[[^\]]*\])? said:\s*)+/i;
/** Exchange's non-delivery report: `Remote Server returned '550 5.1.1 RESOLVER.ADR.RecipNotFound; not found'`. */
const EXCHANGE_QUOTE = /^\s*Remote Server returned '([\s\S]*)'\s*$/i;
const WRAPPER_SUFFIX = /\s*\(in reply to [A-Za-z ]{1,40}? command\)\.?\s*$/i;
/**
 * A non-delivery report's diagnostic (Exchange, Barracuda): `#< #5.0.0 smtp;550 5.1.1 User unknown>
 * #SMTP#`, with the reporting host or product before the `;` (`X-Spam-&-Virus-Firewall;`, whose
 * words are no verdict). The report's own code is not the receiver's: the quoted reply is read.
 */
const NDR_QUOTE =
  /^\s*(?:\S+\s+)?#<[^#]{0,100}#[245]\.\d{1,3}\.\d{1,3}\s+(?:[^;<>]{0,60};\s*)?([\s\S]*?)>\s*#SMTP#\.?\s*$/i;
const SUPPRESSING: ReadonlySet<Family> = new Set<Family>(['bad_recipient', 'bad_domain']);
/** Verdicts a limit's wording can be misread as: never retried, so a limit read as one loses mail. */
const PERMANENT_VERDICTS: ReadonlySet<Family> = new Set<Family>([
  'mailbox_full',
  'policy_block',
  'content_rejected',
  'bad_recipient',
  'bad_domain',
]);
/**
 * A permanent family's reading under an SMTP 4xx: what the receiver says about the same cause
 * when it means "not now" (a block is a deferral, a bad address a mailbox that may come back,
 * content its checker's trouble).
 */
const AS_4XX: Readonly<Record<string, Family>> = {
  bad_recipient: 'mailbox_temporary',
  mailbox_full: 'mailbox_temporary',
  bad_domain: 'unknown',
  policy_block: 'reputation_deferral',
  content_rejected: 'transient_system',
};
const UNIT_MS: Readonly<Record<string, number>> = { s: 1000, m: 60_000, h: 3_600_000 };
const WAIT_TEXT =
  /\b(?:try again in|retry in|wait|greylisted for)\s+(\d{1,6})\s*(seconds?|secs?|s|minutes?|mins?|m|hours?|hrs?|h)\b/i;
const WAIT_UNTIL_TEXT =
  /\btry again after\s+((?:[A-Z][a-z]{2},\s*)?\d{1,2}\s+[A-Z][a-z]{2}\s+\d{4}\s+\d{2}:\d{2}:\d{2}\s*(?:UTC|GMT|[+-]\d{4}))/;

/**
 * One line of text to match on. SMTP replies arrive multi-line (nodemailer keeps every
 * `450-` line): the basic code is dropped from each line, and the enhanced code Gmail
 * repeats on continuation lines too, so wording split across lines still matches.
 */
export function normaliseReplyText(reply: Pick<Reply, 'channel' | 'text'>): string {
  return normalised(reply.channel, readable(reply));
}

/**
 * The text as read, before it is joined into one line: typographic apostrophes as plain ones
 * ("doesn’t" as "doesn't"), and an SMTP reply without what quoted it. Computed once per reply:
 * the wording and the enhanced code are both read from it.
 */
function readable(reply: Pick<Reply, 'channel' | 'text'>): string {
  const text = reply.text.replace(/[\u2018\u2019]/g, "'");
  return reply.channel === 'http' ? text : unwrapped(text);
}

function normalised(channel: Reply['channel'], text: string): string {
  if (channel === 'http') return text.replace(/\s+/g, ' ').trim();
  const lines = text.split(/\r?\n/).map((line) => line.replace(BASIC_PREFIX, ''));
  const joined = lines.map((line, i) => (i === 0 ? line : line.replace(LEADING_ENHANCED, ''))).join(' ');
  // A closing full stop or bang says nothing: "Mailbox not available" and "…available." read alike.
  return joined
    .replace(/\s+/g, ' ')
    .replace(/[\s.!,;]+$/, '')
    .trim();
}

/** An SMTP reply's text without what a DSN, an ESP event or a relay wrapped it in. */
function unwrapped(text: string): string {
  // Quotes nest (a relay's "host … said:" around a report's `#< … #SMTP#`): unwrap until nothing changes.
  let current = text;
  for (let depth = 0; depth < 4; depth++) {
    const quoted = EXCHANGE_QUOTE.exec(current)?.[1] ?? NDR_QUOTE.exec(current)?.[1] ?? current;
    const next = quoted.replace(WRAPPER_PREFIX, '').replace(WRAPPER_SUFFIX, '');
    if (next === current) break;
    current = next;
  }
  return current;
}

/**
 * The RFC 3463 code in an SMTP reply. HTTP bodies are not searched: digits there
 * (versions, IP addresses in JSON) are not status codes.
 */
function enhancedCode(channel: Reply['channel'], readableText: string): string | undefined {
  if (channel !== 'smtp') return undefined;
  const m = ENHANCED.exec(readableText);
  return m ? `${m[1]}.${m[2]}.${m[3]}` : undefined;
}

function statusMatches(rule: ReplyRule, status: number): boolean {
  if (rule.status === undefined) return true;
  if (typeof rule.status === 'number') return rule.status === status;
  return status >= rule.status[0] && status <= rule.status[1];
}

const organisationOfHost = compileOrganisations(BUILT_IN_ORGANISATIONS);

/**
 * The receiving organisations a reply speaks for, whose own rule sets are read: the one the
 * caller names (as `packages/core` names them, or a slug such as `microsoft365` for its
 * organisation), the answering host's (by the same MX patterns), and each whose marks (its code
 * tables, its own host names) the text carries.
 */
export function receiversOf(reply: Reply, text: string = normaliseReplyText(reply)): ReadonlySet<string> {
  const found = new Set<string>();
  if (reply.receiver !== undefined) found.add(RECEIVER_ALIASES[reply.receiver] ?? reply.receiver);
  const byHost = reply.host === undefined ? undefined : organisationOfHost([{ exchange: reply.host, priority: 0 }]);
  if (byHost !== undefined) found.add(byHost);
  for (const [name, mark] of Object.entries(RECEIVER_MARKS)) if (mark.test(text)) found.add(name);
  return found;
}

function ruleMatches(
  rule: ReplyRule,
  reply: Reply,
  text: string,
  enhanced: string | undefined,
  receivers: ReadonlySet<string>,
): boolean {
  if (rule.receiver !== undefined && !receivers.has(rule.receiver)) return false;
  if (rule.channel !== undefined && rule.channel !== reply.channel) return false;
  if (!statusMatches(rule, reply.status)) return false;
  if (rule.enhanced !== undefined && (enhanced === undefined || !rule.enhanced.test(enhanced))) return false;
  if (rule.errorName !== undefined && !rule.errorName.test(reply.errorName ?? '')) return false;
  if (rule.text !== undefined && !rule.text.test(text)) return false;
  if (rule.unless?.test(text)) return false;
  return true;
}

function clampHint(ms: number): number | undefined {
  if (!Number.isFinite(ms)) return undefined;
  return Math.min(Math.max(Math.round(ms), 0), MAX_HINT_MS);
}

function header(reply: Reply, name: string): string | undefined {
  const value = reply.headers?.[name];
  return value === undefined || value.trim() === '' ? undefined : value.trim();
}

/** `Retry-After` is delta-seconds or an HTTP-date (RFC 9110 §10.2.3). */
function parseRetryAfter(value: string, now: number): number | undefined {
  if (/^\d+$/.test(value)) return Number(value) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : at - now;
}

/**
 * The reply's own idea of when to come back, ms from `now`. Headers first (they are
 * machine-made), then the text. SendGrid's `X-RateLimit-Reset` is on every response, so it
 * only counts once the budget is spent (429, or `X-RateLimit-Remaining: 0`).
 */
export function retryHintMs(reply: Reply, now: number, text: string = normaliseReplyText(reply)): number | undefined {
  const amz = header(reply, 'x-amz-retry-after');
  if (amz !== undefined && /^\d+$/.test(amz)) return clampHint(Number(amz));
  const retryAfter = header(reply, 'retry-after');
  const fromRetryAfter = retryAfter === undefined ? undefined : parseRetryAfter(retryAfter, now);
  if (fromRetryAfter !== undefined) return clampHint(fromRetryAfter);
  const reset = header(reply, 'x-ratelimit-reset');
  if (
    reset !== undefined &&
    /^\d+$/.test(reset) &&
    (reply.status === 429 || header(reply, 'x-ratelimit-remaining') === '0')
  ) {
    return clampHint(Number(reset) * 1000 - now);
  }
  const wait = WAIT_TEXT.exec(text);
  if (wait?.[1] !== undefined && wait[2] !== undefined) {
    const unit = wait[2].toLowerCase().startsWith('h') ? 'h' : wait[2].toLowerCase().startsWith('m') ? 'm' : 's';
    return clampHint(Number(wait[1]) * (UNIT_MS[unit] ?? 1000));
  }
  const until = WAIT_UNTIL_TEXT.exec(text);
  if (until?.[1] !== undefined) {
    const at = Date.parse(until[1]);
    if (!Number.isNaN(at)) return clampHint(at - now);
  }
  return undefined;
}

/** The first row of `rules` that matches; the table ends in a catch-all, so there always is one. */
function firstMatch(
  rules: readonly ReplyRule[],
  reply: Reply,
  text: string,
  enhanced: string | undefined,
  receivers: ReadonlySet<string>,
): ReplyRule {
  for (const rule of rules) if (ruleMatches(rule, reply, text, enhanced, receivers)) return rule;
  return { id: 'fallback.unknown', family: 'unknown', permanent: false, source: 'issue 15 decision order 8' };
}

/**
 * Never suppress on a guess (decision order 8): a reading of a bad address whose text also
 * speaks of the sender or a filter ("not allowed to receive mails from you", "Relay denied",
 * "Possible Forgery", "quarantined") is a block of the message, and the address is kept. Of the 40
 * severe misreads in the first reads of sets 1–13, 7 were such blocks read as bad addresses.
 */
function asDoubted(rule: ReplyRule, reply: Reply, text: string): ReplyRule {
  // An ESP API's own words for its suppression list ("Address blacklisted") are its rows' to read.
  if (reply.channel !== 'smtp' || rule.family !== 'bad_recipient' || !ABOUT_THE_SENDER.test(text)) return rule;
  return { ...rule, id: `${rule.id}.sender-named`, family: 'policy_block', permanent: true };
}

/**
 * Volume first (decision order 1–3), whatever row matched: a permanent reading of a reply that
 * names a count limit over a window ("Recipients Domain Daily Quota Exceeded", "limit of 400 rcpts
 * per 24 hours", "Throttling quota exceeded") is that limit, not a full mailbox or a block: a day,
 * a month, a plan or an account's is `quota_exhausted`, any other `throttled`. A mailbox's
 * storage, a message's size and a verdict on the sender are no such limit.
 */
function asLimit(rule: ReplyRule, reply: Reply, text: string): ReplyRule {
  if (!rule.permanent || !PERMANENT_VERDICTS.has(rule.family)) return rule;
  const sendingQuota = SENDING_QUOTA.test(text);
  const limit = sendingQuota || WINDOW_LIMIT.test(text) || (TRAFFIC_LIMIT.test(text) && !NOT_TRAFFIC_LIMIT.test(text));
  if (!limit || (!sendingQuota && NOT_A_SENDING_LIMIT.test(text))) return rule;
  const family: Family = A_DAY_OR_LONGER.test(text) ? 'quota_exhausted' : 'throttled';
  const scope = reply.channel === 'http' ? 'provider' : 'receiver';
  return { ...rule, id: `${rule.id}.limit`, family, permanent: false, scope };
}

/**
 * The row as the reply allows it: an SMTP 4xx is not final unless the row says so, and neither
 * is a reply whose words say it is for now (decision order 6, text over code), unless they also
 * say it is final.
 */
function asSent(rule: ReplyRule, reply: Reply, text: string): ReplyRule {
  if (reply.channel !== 'smtp' || !rule.permanent || rule.finalEvenAs4xx === true) return rule;
  const temporaryClass = reply.status >= 400 && reply.status < 500;
  const saysNotFinal = SAYS_NOT_FINAL.test(text) && !SAYS_FINAL.test(text);
  if (!temporaryClass && !saysNotFinal) return rule;
  const id = `${rule.id}.${temporaryClass ? '4xx' : 'not-final'}`;
  return { ...rule, id, family: AS_4XX[rule.family] ?? rule.family, permanent: false };
}

/** Classifies one reply. Pure: `now` (epoch ms) only turns an absolute reset time into a wait. */
export function classifyReply(reply: Reply, now: number = Date.now()): Classification {
  const read = readable(reply);
  const text = normalised(reply.channel, read);
  const enhanced = enhancedCode(reply.channel, read);
  const matched = firstMatch(RULES, reply, text, enhanced, receiversOf(reply, text));
  const rule = asSent(asLimit(asDoubted(matched, reply, text), reply, text), reply, text);
  const retryAfterMs = retryHintMs(reply, now, text);
  return {
    family: rule.family,
    permanent: rule.permanent,
    // A policy block says nothing about the address: only a permanent "no such mailbox or
    // domain" may take an address off every future send.
    suppress: rule.permanent && SUPPRESSING.has(rule.family),
    ...(rule.scope !== undefined ? { scope: rule.scope } : {}),
    ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
    ...(enhanced !== undefined ? { enhanced } : {}),
    answered: rule.answered ?? true,
    rule: rule.id,
    version: CLASSIFIER_VERSION,
  };
}
