import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AcceptedMessage } from '../recorder.js';
import { domainOf, isAddress } from './address.js';
import type { Arrival, SandboxContext } from './context.js';
import { basicAuth, sendText } from './http.js';
import { mimeHeaders } from './mime.js';
import { carryOut } from './outcome.js';

/** `POST /v3/{domain}/messages` and `…/messages.mime`, as the SDK posts them. */
const ROUTE = /^\/v3\/([^/]+)\/messages(\.mime)?$/;

// What Mailgun's nginx answers on an internal error: HTML, which the SDK passes on as `details`.
const ERROR_PAGE =
  '<html>\r\n<head><title>500 Internal Server Error</title></head>\r\n<body>\r\n<center><h1>500 Internal Server Error</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n';

/** The parts of a Mailgun send the sandbox acts on or records. */
interface MailgunSend {
  from: string;
  to: string[];
  recipients: string[];
  subject: string | undefined;
  messageId: string | undefined;
  tags: Record<string, string>;
  sluiceId: string | undefined;
  /**
   * A batch (`recipient-variables` given): each recipient's own copy, its `%recipient.<key>%`
   * references made in the subject and the `v:` variables, as Mailgun sends one email each.
   */
  copies?: { to: string; subject: string | undefined; tags: Record<string, string> }[];
}

/** Mailgun's limit on a batch's recipients. */
const MAX_BATCH = 1_000;

/** `%recipient.key%` made from a recipient's variables (a missing key stays as it is). */
function withRecipient(text: string, vars: Record<string, unknown>): string {
  return text.replace(/%recipient\.([A-Za-z0-9_.-]+)%/g, (whole, key: string) => {
    const v = vars[key];
    return v === undefined ? whole : typeof v === 'string' ? v : JSON.stringify(v);
  });
}

/** Each recipient's copy of a batch, or the error Mailgun answers. */
function batchCopies(
  form: FormData,
  to: readonly string[],
  subject: string | undefined,
  tags: Record<string, string>,
): { ok: true; copies: NonNullable<MailgunSend['copies']> } | { ok: false; message: string } | undefined {
  const raw = texts(form, 'recipient-variables')[0];
  if (raw === undefined) return undefined;
  let all: Record<string, Record<string, unknown>>;
  try {
    all = JSON.parse(raw) as Record<string, Record<string, unknown>>;
    if (typeof all !== 'object' || all === null || Array.isArray(all)) throw new Error('not an object');
  } catch {
    return { ok: false, message: "'recipient-variables' parameter should be a valid JSON" };
  }
  if (to.length > MAX_BATCH) return { ok: false, message: `Too many recipients: at most ${MAX_BATCH} a batch` };
  return {
    ok: true,
    copies: to.map((address) => {
      const vars = all[address] ?? {};
      return {
        to: address,
        subject: subject === undefined ? undefined : withRecipient(subject, vars),
        tags: Object.fromEntries(Object.entries(tags).map(([k, v]) => [k, withRecipient(v, vars)])),
      };
    }),
  };
}

/** The sending domain when `method path` is a Mailgun send, and whether it is the MIME form. */
export function mailgunRoute(method: string, path: string): { domain: string; mime: boolean } | undefined {
  if (method !== 'POST') return undefined;
  const match = ROUTE.exec(path);
  return match?.[1] === undefined ? undefined : { domain: match[1], mime: match[2] !== undefined };
}

/** Splits `a@x.com, "Doe, J" <j@y.com>` at the commas that separate addresses. */
function splitAddresses(value: string): string[] {
  const out: string[] = [];
  let current = '';
  let quoted = false;
  for (const char of value) {
    if (char === '"') quoted = !quoted;
    if (char === ',' && !quoted) {
      out.push(current);
      current = '';
    } else current += char;
  }
  out.push(current);
  return out.map((a) => a.trim()).filter((a) => a.length > 0);
}

function texts(form: FormData, name: string): string[] {
  return form.getAll(name).filter((v): v is string => typeof v === 'string');
}

function addresses(form: FormData, name: string): string[] {
  return texts(form, name).flatMap(splitAddresses);
}

/** `v:` variables as tags, `o:tag` values as `tag:<name>`, and the Message-ID of `h:Message-ID`. */
function extras(form: FormData): { tags: Record<string, string>; messageId: string | undefined } {
  const tags: Record<string, string> = {};
  let messageId: string | undefined;
  for (const [name, value] of form.entries()) {
    if (typeof value !== 'string') continue;
    const lower = name.toLowerCase();
    if (lower.startsWith('v:')) tags[name.slice(2)] = value;
    else if (lower === 'o:tag') tags[`tag:${value}`] = '';
    else if (lower === 'h:message-id') messageId ??= value;
  }
  return { tags, messageId };
}

type Parsed = { ok: true; send: MailgunSend } | { ok: false; message: string };

const missing = (field: string): Parsed => ({ ok: false, message: `'${field}' parameter is missing` });
const notAddress = (field: string): Parsed => ({
  ok: false,
  message: `'${field}' parameter is not a valid address. please check documentation`,
});

function parseMessages(form: FormData): Parsed {
  const from = texts(form, 'from')[0];
  if (from === undefined) return missing('from');
  if (!isAddress(from)) return notAddress('from');
  const to = addresses(form, 'to');
  if (to.length === 0) return missing('to');
  const recipients = [...to, ...addresses(form, 'cc'), ...addresses(form, 'bcc')];
  if (!recipients.every(isAddress)) return notAddress('to');
  const template = texts(form, 'template')[0];
  const subject = texts(form, 'subject')[0];
  if (subject === undefined && template === undefined) return missing('subject');
  if (template === undefined && !['text', 'html', 'amp-html'].some((f) => form.has(f))) {
    return { ok: false, message: "Need at least one of 'text', 'html' or 'template' parameters specified" };
  }
  const { tags, messageId } = extras(form);
  const batch = batchCopies(form, to, subject ?? template, tags);
  if (batch !== undefined && !batch.ok) return batch;
  return {
    ok: true,
    send: {
      from,
      to,
      recipients,
      subject: subject ?? template,
      messageId,
      tags,
      sluiceId: tags.sluice_id,
      ...(batch ? { copies: batch.copies } : {}),
    },
  };
}

async function parseMime(form: FormData): Promise<Parsed> {
  const to = addresses(form, 'to');
  if (to.length === 0) return missing('to');
  if (!to.every(isAddress)) return notAddress('to');
  const part = form.get('message');
  if (part === null) return missing('message');
  const headers = mimeHeaders(typeof part === 'string' ? part : await part.text());
  const { tags, messageId } = extras(form);
  return {
    ok: true,
    send: {
      from: headers.get('from') ?? '',
      to,
      recipients: to,
      subject: headers.get('subject'),
      messageId: messageId ?? headers.get('message-id'),
      tags,
      sluiceId: tags.sluice_id ?? headers.get('x-sluice-id'),
    },
  };
}

/** Shaped like a real Mailgun id: `<YYYYMMDDhhmmss.N.HEX@domain>`, unique per send. */
function mailgunId(arrivedAt: number, domain: string): string {
  const stamp = new Date(arrivedAt).toISOString().replace(/\D/g, '').slice(0, 14);
  return `<${stamp}.1.${randomBytes(8).toString('hex').toUpperCase()}@${domain}>`;
}

/** A Mailgun send: authorize, parse the form, decide on arrival, record, wait the latency, answer. */
export async function mailgunSend(
  ctx: SandboxContext,
  req: IncomingMessage,
  arrival: Arrival,
  res: ServerResponse,
  route: { domain: string; mime: boolean },
): Promise<void> {
  const json = (status: number, body: unknown, headers: Record<string, string> = {}): void =>
    sendText(res, status, 'application/json', JSON.stringify(body), headers);

  if (ctx.mailgunApiKey !== undefined) {
    const auth = basicAuth(req);
    if (auth?.user !== 'api' || auth.password !== ctx.mailgunApiKey) {
      return sendText(res, 401, 'text/plain', 'Forbidden');
    }
  }
  if (arrival.tooLarge) return json(413, { message: 'Message is too large' });
  let form: FormData;
  try {
    const contentType = req.headers['content-type'] ?? '';
    form = await new Response(arrival.body, { headers: { 'content-type': contentType } }).formData();
  } catch {
    return json(400, { message: 'Request body must be multipart/form-data or application/x-www-form-urlencoded' });
  }
  const parsed = route.mime ? await parseMime(form) : parseMessages(form);
  if (!parsed.ok) return json(400, { message: parsed.message });

  const { send } = parsed;
  const id = mailgunId(arrival.arrivedAt, route.domain);
  const copyOf = (to: string[], subject: string | undefined, tags: Record<string, string>): AcceptedMessage => ({
    protocol: 'mailgun',
    providerMessageId: id,
    messageId: send.messageId,
    sluiceId: tags.sluice_id,
    from: send.from,
    to,
    subject,
    domain: domainOf(to[0] ?? ''),
    arrivedAt: arrival.arrivedAt,
    tags,
  });
  // A batch: Mailgun takes every valid address and reports a bounce later, by webhook.
  const copies = send.copies?.map((c) => copyOf([c.to], c.subject, c.tags)) ?? [
    copyOf(send.to, send.subject, send.tags),
  ];
  const bounced = send.copies === undefined ? [] : copies.filter((c) => ctx.policy().bounces(c.to[0]!));
  const delivered = copies.filter((c) => !bounced.includes(c));
  const domain = domainOf((delivered[0] ?? copies[0]!).to[0] ?? '');
  const recipients = send.copies === undefined ? send.recipients : delivered.flatMap((c) => c.to);
  const decision = ctx.policy().decide(domain, recipients, arrival.arrivedMono);
  if (decision.kind !== 'bounce' && decision.kind !== 'fail' && decision.kind !== 'throttle') {
    for (const c of bounced) {
      ctx.recorder.count(c.domain, 'rejected');
      ctx.report(c, true);
    }
  }
  await carryOut(ctx, res, domain, decision, delivered, {
    bounce: () => json(400, { message: "'to' parameter is not a valid address. please check documentation" }),
    fail: () => sendText(res, 500, 'text/html', ERROR_PAGE),
    throttle: (retryAfterMs) =>
      json(
        429,
        { message: 'Too many requests' },
        { 'Retry-After': String(Math.max(1, Math.ceil(retryAfterMs / 1000))) },
      ),
    accept: () => json(200, { id, message: 'Queued. Thank you.' }),
  });
}
