import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import type { AcceptedMessage } from '../recorder.js';
import { bareAddress, domainOf, isAddress } from './address.js';
import type { Arrival, SandboxContext } from './context.js';
import { parseJson, sendText } from './http.js';
import { carryOut } from './outcome.js';

/** One entry of SendGrid's `{"errors":[…]}`; `help` is left out where SendGrid leaves it out. */
interface SendgridError {
  message: string;
  field: string | null;
  help?: string | null;
}

/** The parts of a v3 mail send the sandbox acts on or records. */
interface MailSend {
  from: string;
  to: string[];
  /** Every address with its field path, for a bounce to name. */
  recipients: { address: string; field: string }[];
  categories: string[];
  /**
   * Each personalization as its copy of the message arrives: its To addresses, its subject
   * (substitutions made), its `Message-ID` and custom args (over the message's).
   */
  copies: {
    to: string[];
    subject: string | undefined;
    messageId: string | undefined;
    customArgs: Record<string, string>;
  }[];
}

/** SendGrid's limit: recipients (to, cc and bcc) across the personalizations of one request. */
const MAX_RECIPIENTS = 1_000;

const HELP = 'http://sendgrid.com/docs/API_Reference/Web_API_v3/Mail/errors.html#message.';
const UNAUTHORIZED: SendgridError = {
  field: null,
  message: 'The provided authorization grant is invalid, expired, or revoked',
  help: null,
};

type Json = Record<string, unknown>;

function object(value: unknown): Json | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Json) : undefined;
}

function array(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

function string(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

/** `{ key: value }` with every value as text, as SendGrid keeps custom_args. */
function strings(value: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(object(value) ?? {})) out[k] = typeof v === 'string' ? v : JSON.stringify(v);
  return out;
}

function headerOf(headers: unknown, name: string): string | undefined {
  const entry = Object.entries(object(headers) ?? {}).find(([k]) => k.toLowerCase() === name);
  return string(entry?.[1]);
}

function invalid(message: string, field: string, help: string): { ok: false; error: SendgridError } {
  return { ok: false, error: { message, field, help: `${HELP}${help}` } };
}

/** Checks what SendGrid checks first, naming the field as SendGrid does. */
function parseMailSend(body: unknown): { ok: true; mail: MailSend } | { ok: false; error: SendgridError } {
  const mail = object(body);
  if (mail === undefined) return { ok: false, error: { message: 'Bad Request', field: null, help: null } };
  const from = string(object(mail.from)?.email);
  if (from === undefined || !isAddress(from)) {
    return invalid('The from email does not contain a valid address.', 'from.email', 'from');
  }
  const personalizations = array(mail.personalizations).map((p) => object(p) ?? {});
  if (personalizations.length === 0) {
    return invalid(
      'The personalizations field is required and must have at least one personalization.',
      'personalizations',
      'personalizations',
    );
  }
  const to: string[] = [];
  const recipients: MailSend['recipients'] = [];
  for (const [i, p] of personalizations.entries()) {
    if (array(p.to).length === 0) {
      return invalid(
        'The to array is required for all personalization objects, and must have at least one email object with a valid email address.',
        `personalizations.${i}.to`,
        'personalizations.to',
      );
    }
    for (const kind of ['to', 'cc', 'bcc'] as const) {
      for (const [j, entry] of array(p[kind]).entries()) {
        const address = string(object(entry)?.email);
        const field = `personalizations.${i}.${kind}.${j}.email`;
        if (address === undefined || !isAddress(address)) {
          return invalid('Does not contain a valid address.', field, `personalizations.${kind}`);
        }
        if (kind === 'to') to.push(address);
        recipients.push({ address, field });
      }
    }
  }
  const template = string(mail.template_id);
  const subject = string(mail.subject) ?? string(personalizations[0]?.subject);
  if (template === undefined && subject === undefined && !personalizations.every((p) => string(p.subject))) {
    return invalid(
      'The subject is required. You can get around this requirement if you use a template with a subject defined or if every personalization has a subject defined.',
      'subject',
      'subject',
    );
  }
  const content = array(mail.content).filter((c) => string(object(c)?.value) !== undefined);
  if (template === undefined && content.length === 0) {
    return invalid(
      'Unless a valid template_id is provided, the content parameter is required. There must be at least one defined content block. We typically suggest both text/plain and text/html blocks are included, but only one block is required.',
      'content',
      'contents',
    );
  }
  if (recipients.length > MAX_RECIPIENTS) {
    return invalid(
      `The total number of recipients must be no more than ${MAX_RECIPIENTS}.`,
      'personalizations',
      'personalizations',
    );
  }
  const copies = personalizations.map((p) => ({
    to: array(p.to).map((entry) => string(object(entry)?.email) ?? ''),
    subject: substituted(string(p.subject) ?? subject ?? template, strings(p.substitutions)),
    // A personalization's headers and custom_args override the message's, as in SendGrid's events.
    messageId: headerOf(p.headers, 'message-id') ?? headerOf(mail.headers, 'message-id'),
    customArgs: { ...strings(mail.custom_args), ...strings(p.custom_args) },
  }));
  return {
    ok: true,
    mail: {
      from,
      to,
      recipients,
      categories: array(mail.categories).filter((c): c is string => typeof c === 'string'),
      copies,
    },
  };
}

/** A text with a personalization's substitutions made (each key replaced wherever it occurs, once over). */
function substituted(text: string | undefined, substitutions: Record<string, string>): string | undefined {
  const keys = Object.keys(substitutions);
  if (text === undefined || keys.length === 0) return text;
  const pattern = new RegExp(keys.map((k) => k.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|'), 'g');
  return text.replace(pattern, (key) => substitutions[key] ?? key);
}

/**
 * `X-RateLimit-*` for a send to `domain`: its bucket, or for a domain without a rate (or no
 * domain yet) the account's rate, never used up. `Reset` is when a token is next available.
 */
function rateHeaders(ctx: SandboxContext, domain: string | undefined): Record<string, string> {
  const state = domain === undefined ? undefined : ctx.policy().rateState(domain, performance.now());
  const limit = state?.limit ?? ctx.scenario().account.maxSendRate;
  return {
    'X-RateLimit-Limit': String(Math.ceil(limit)),
    'X-RateLimit-Remaining': String(state?.remaining ?? Math.ceil(limit)),
    'X-RateLimit-Reset': String(Math.ceil((Date.now() + (state?.waitMs ?? 0)) / 1000)),
  };
}

/** `POST /v3/mail/send`: authorize, validate, decide on arrival, record, wait the latency, answer. */
export async function sendgridSend(
  ctx: SandboxContext,
  req: IncomingMessage,
  arrival: Arrival,
  res: ServerResponse,
): Promise<void> {
  // Before the recipient is known, the headers speak of the account.
  const errors = (status: number, list: SendgridError[], headers = rateHeaders(ctx, undefined)): void =>
    sendText(res, status, 'application/json', JSON.stringify({ errors: list }), headers);

  if (ctx.sendgridApiKey !== undefined && req.headers.authorization !== `Bearer ${ctx.sendgridApiKey}`) {
    return errors(401, [UNAUTHORIZED]);
  }
  if (arrival.tooLarge) return errors(413, [{ field: null, message: 'Payload Too Large', help: null }]);
  const json = parseJson(arrival.body);
  if (!json.ok) return errors(400, [{ field: null, message: 'Bad Request', help: null }]);
  const parsed = parseMailSend(json.value);
  if (!parsed.ok) return errors(400, [parsed.error]);

  const { mail } = parsed;
  const rateDomain = domainOf(mail.to[0] ?? '');
  const recipients = mail.recipients.map((r) => r.address);
  const decision = ctx.policy().decide(rateDomain, recipients, arrival.arrivedMono);
  // 22 characters of base64url, the shape of a real X-Message-Id.
  const id = randomBytes(16).toString('base64url');
  const tags: Record<string, string> = {};
  for (const category of mail.categories) tags[`category:${category}`] = '';
  // One arrival per personalization: each is a copy of the message of its own.
  const messages: AcceptedMessage[] = mail.copies.map((copy) => ({
    protocol: 'sendgrid',
    providerMessageId: id,
    messageId: copy.messageId,
    sluiceId: copy.customArgs.sluice_id,
    from: mail.from,
    to: copy.to,
    subject: copy.subject,
    domain: domainOf(copy.to[0] ?? ''),
    arrivedAt: arrival.arrivedAt,
    tags: { ...tags, ...copy.customArgs },
  }));
  await carryOut(ctx, res, rateDomain, decision, messages, {
    bounce(address) {
      const field =
        mail.recipients.find((r) => bareAddress(r.address) === address)?.field ?? 'personalizations.0.to.0.email';
      const error = { message: 'Does not contain a valid address.', field, help: `${HELP}personalizations.to` };
      errors(400, [error], rateHeaders(ctx, rateDomain));
    },
    fail: () => errors(500, [{ field: null, message: 'internal error' }], rateHeaders(ctx, rateDomain)),
    // Stated as of the refusal, not of the answer after latency, when tokens may be back.
    throttle: (retryAfterMs) =>
      errors(429, [{ field: null, message: 'too many requests' }], {
        ...rateHeaders(ctx, rateDomain),
        'X-RateLimit-Remaining': '0',
        'X-RateLimit-Reset': String(Math.ceil((arrival.arrivedAt + retryAfterMs) / 1000)),
      }),
    accept: () => sendText(res, 202, undefined, '', { 'X-Message-Id': id, ...rateHeaders(ctx, rateDomain) }),
  });
}
