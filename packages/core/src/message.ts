import { z } from 'zod';
import { SluiceError } from './errors.js';
import {
  MAX_BODY_BYTES,
  MAX_HEADERS,
  MAX_TAGS,
  PROTOTYPE_KEYS,
  bodyProblem,
  keyedRecord,
  lineProblem,
  refineWith,
  templateDataSchema,
  utf8Bytes,
} from './message-fields.js';
import { parseInput } from './parse.js';
import { PRIORITY_CLASSES, type PriorityClass } from './priority.js';

const NAME = /^[A-Za-z0-9_-]{1,64}$/;
/** Header field names (RFC 5322 ftext) */
const HEADER_NAME = /^[!-9;-~]{1,76}$/;
/** Headers Sluice writes itself; a message may not set them. */
const RESERVED_HEADERS = new Set([
  'from',
  'to',
  'cc',
  'bcc',
  'subject',
  'message-id',
  'date',
  'content-type',
  'content-transfer-encoding',
  'mime-version',
  'return-path',
]);

const address = z.email({ message: 'must be an email address' }).max(254);
const line = (max: number) => z.string().max(max).superRefine(refineWith(lineProblem));
const notBlank = { message: 'must not be empty or only spaces' };
/** A body: not empty, no NUL or lone surrogate; its size is checked in bytes with the others'. */
const body = z
  .string()
  .refine((s) => s.trim() !== '', { message: 'must not be empty or only whitespace (omit it instead)' })
  .superRefine(refineWith(bodyProblem));

/** `Name <addr@example.com>` or `addr@example.com`. */
const fromField = z
  .string()
  .max(1000)
  .superRefine(refineWith(lineProblem))
  .transform((value, ctx) => {
    const m = /^\s*(?:"?([^"<>]*?)"?\s*)?<([^<>\s]+)>\s*$/.exec(value);
    const addr = m ? m[2]! : value.trim();
    if (!address.safeParse(addr).success) {
      ctx.addIssue({ code: 'custom', message: 'must be an email address or "Name <address>"' });
      return z.NEVER;
    }
    const name = m?.[1]?.trim();
    return name ? { address: addr, name } : { address: addr };
  });

/** A message's fields, each checked alone (the whole is {@link messageInputSchema}). */
export const messageFieldsSchema = z.strictObject({
  from: fromField,
  to: address,
  replyTo: address.optional(),
  /** Required unless `template` or `raw` gives it. */
  subject: line(998)
    .refine((s) => s.trim() !== '', notBlank)
    .optional(),
  /** `text` and `html` together: at most {@link MAX_BODY_BYTES} UTF-8 bytes. */
  text: body.optional(),
  html: body.optional(),
  /**
   * A template stored at the ESP (SES `TemplateName`, SendGrid `template_id`, Mailgun
   * `template`) and its variables. SMTP providers cannot send it.
   */
  template: z
    .strictObject({
      name: line(256).refine((s) => s.trim() !== '', notBlank),
      /** JSON data (plain objects, arrays, strings, finite numbers, booleans, null), ≤ 256 KiB as JSON. */
      data: templateDataSchema,
    })
    .optional(),
  /**
   * The whole message as MIME (RFC 5322), sent as is: `from` and `to` still make the
   * envelope. SES (`Raw`), Mailgun (`messages.mime`) and SMTP can send it; SendGrid cannot.
   */
  raw: body
    .refine((s) => utf8Bytes(s) <= MAX_BODY_BYTES, { message: `must be at most ${MAX_BODY_BYTES} bytes (UTF-8)` })
    .optional(),
  priority: z
    .enum(PRIORITY_CLASSES, {
      message: `must be one of ${PRIORITY_CLASSES.join(', ')}`,
    })
    .default('normal'),
  stream: z.string().regex(NAME, { message: 'must match [A-Za-z0-9_-]{1,64}' }).default('transactional'),
  campaignId: z.string().regex(NAME, { message: 'must match [A-Za-z0-9_-]{1,64}' }).optional(),
  tenantId: z.string().regex(NAME, { message: 'must match [A-Za-z0-9_-]{1,64}' }).default('default'),
  idempotencyKey: line(256)
    .refine((s) => s.trim() !== '', notBlank)
    .optional(),
  expiresAt: z
    .union([z.number().int().positive(), z.iso.datetime({ offset: true }).transform((s) => Date.parse(s))])
    .optional(),
  headers: keyedRecord(
    z
      .record(z.string().regex(HEADER_NAME, { message: 'is not a valid header name' }), line(2000))
      .superRefine((headers, ctx) => {
        for (const name of Object.keys(headers)) {
          if (RESERVED_HEADERS.has(name.toLowerCase())) {
            ctx.addIssue({ code: 'custom', path: [name], message: 'is set by Sluice and may not be given' });
          }
        }
      }),
    'headers',
    MAX_HEADERS,
  ).optional(),
  tags: keyedRecord(
    z.record(
      z.string().regex(NAME, { message: 'must match [A-Za-z0-9_-]{1,64}' }),
      z.string().regex(/^[A-Za-z0-9_.@-]{0,256}$/, { message: 'must match [A-Za-z0-9_.@-]{0,256}' }),
    ),
    'tags',
    MAX_TAGS,
  ).optional(),
});

/** A message as a backend submits it. One recipient per message. */
export const messageInputSchema = messageFieldsSchema.superRefine((m, ctx) => {
  const content = [m.text !== undefined || m.html !== undefined, m.template !== undefined, m.raw !== undefined].filter(
    Boolean,
  ).length;
  if (content === 0) {
    ctx.addIssue({
      code: 'custom',
      path: ['text'],
      message: 'a message needs text or html, a template, or raw MIME',
    });
  } else if (content > 1) {
    ctx.addIssue({
      code: 'custom',
      path: [m.raw !== undefined ? 'raw' : 'template'],
      message: 'text/html, template and raw are alternatives: give one',
    });
  }
  if (m.subject === undefined && m.raw === undefined && m.template === undefined) {
    ctx.addIssue({
      code: 'custom',
      path: ['subject'],
      message: 'is required unless a template or raw MIME gives it',
    });
  }
  const bodyBytes = (m.text === undefined ? 0 : utf8Bytes(m.text)) + (m.html === undefined ? 0 : utf8Bytes(m.html));
  if (bodyBytes > MAX_BODY_BYTES) {
    ctx.addIssue({
      code: 'custom',
      path: [m.html !== undefined ? 'html' : 'text'],
      message: `text and html together must be at most ${MAX_BODY_BYTES} bytes (UTF-8), are ${bodyBytes}`,
    });
  }
  if (m.raw !== undefined && (m.headers !== undefined || m.replyTo !== undefined)) {
    ctx.addIssue({
      code: 'custom',
      path: [m.headers !== undefined ? 'headers' : 'replyTo'],
      message: 'goes in the raw MIME itself',
    });
  }
});

/** What `send()` accepts. */
export type MessageInput = z.input<typeof messageInputSchema>;
/** A validated message with defaults applied. */
export type Message = z.output<typeof messageInputSchema>;

/** A message once accepted: what the queues carry. */
export interface QueuedMessage extends Message {
  /** The message id: BullMQ job id, `Message-ID` local part, record key. */
  id: string;
  /** Epoch ms when Sluice accepted it. */
  acceptedAt: number;
  /**
   * A campaign recipient injected with `campaigns.inject`: the message carries no content of
   * its own (the campaign holds it once) and is rendered from it at send time.
   */
  injected?: InjectedFields;
  /** Which API key sent it and from what address: set by the HTTP ingest, none for a backend's client. */
  origin?: MessageOrigin;
}

/** Where a message came from over HTTP (docs/design/tenants-and-keys.md). */
export interface MessageOrigin {
  /** The API key's id (`sluice keys list` shows it). */
  keyId: string;
  /** The address the request came from (behind a proxy: as `api.trustProxy` reads it). */
  source: string;
}

/** What an injected campaign recipient carries besides its address. */
export interface InjectedFields {
  /** Its position in the campaign's list (0-based): its id is `<campaignId>_<position>`. */
  position: number;
  /** The backend's own key for it. */
  key?: string;
  /** Its merge data. */
  data?: Record<string, unknown>;
}

/**
 * Validates a message; throws `SluiceError('invalid_message')` whose message and `path`
 * name the first bad field (prefixed by `pathPrefix`, as in `messages.3.to`).
 */
export function parseMessage(input: unknown, pathPrefix: readonly PropertyKey[] = []): Message {
  const refuse = (at: readonly PropertyKey[], problem: string, cause?: unknown): SluiceError => {
    const path = at.length === 0 ? '(root)' : at.map(String).join('.');
    return new SluiceError('invalid_message', `invalid message: ${path}: ${problem}`, { path, cause });
  };
  try {
    // zod never sees these keys (its objects skip `__proto__`): refuse them by name first.
    const reserved = reservedKeyOf(input);
    if (reserved !== undefined) throw refuse([...pathPrefix, ...reserved], 'is a reserved JavaScript name');
    return parseInput(messageInputSchema, input, { code: 'invalid_message', what: 'message', pathPrefix });
  } catch (error) {
    if (error instanceof SluiceError) throw error;
    // A getter or proxy of the caller's that throws while the message is read.
    throw refuse(pathPrefix, `could not be read: ${error instanceof Error ? error.message : String(error)}`, error);
  }
}

/** The path of a prototype key at the message's top level or in its template, or undefined. */
function reservedKeyOf(input: unknown): PropertyKey[] | undefined {
  const ownReserved = (value: unknown): string | undefined =>
    typeof value === 'object' && value !== null ? Object.keys(value).find((k) => PROTOTYPE_KEYS.has(k)) : undefined;
  const top = ownReserved(input);
  if (top !== undefined) return [top];
  const template = ownReserved((input as { template?: unknown } | null)?.template);
  return template !== undefined ? ['template', template] : undefined;
}

/**
 * When a message stops being worth sending: its own `expiresAt`, else its class's lifetime
 * (`delivery.lifetimeMs`) after it was accepted. Epoch ms.
 */
export function expiresAt(message: QueuedMessage, lifetimeMs: Readonly<Record<PriorityClass, number>>): number {
  return message.expiresAt ?? message.acceptedAt + lifetimeMs[message.priority];
}

/** The recipient's domain, lower-cased. */
export function recipientDomain(to: string): string {
  return to.slice(to.lastIndexOf('@') + 1).toLowerCase();
}
