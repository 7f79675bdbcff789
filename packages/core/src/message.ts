import { z } from 'zod';
import { parseInput } from './parse.js';
import { PRIORITY_CLASSES, type PriorityClass } from './priority.js';

const NO_CRLF = /^[^\r\n]*$/;
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
const line = (max: number) => z.string().max(max).regex(NO_CRLF, { message: 'must not contain CR or LF' });

/** `Name <addr@example.com>` or `addr@example.com`. */
const fromField = z
  .string()
  .regex(NO_CRLF, { message: 'must not contain CR or LF' })
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

/** A message as a backend submits it. One recipient per message. */
export const messageInputSchema = z
  .strictObject({
    from: fromField,
    to: address,
    replyTo: address.optional(),
    /** Required unless `template` or `raw` gives it. */
    subject: line(998).min(1, { message: 'must not be empty' }).optional(),
    text: z.string().max(10_000_000).optional(),
    html: z.string().max(10_000_000).optional(),
    /**
     * A template stored at the ESP (SES `TemplateName`, SendGrid `template_id`, Mailgun
     * `template`) and its variables. SMTP providers cannot send it.
     */
    template: z
      .strictObject({
        name: z.string().min(1).max(256),
        data: z.record(z.string(), z.unknown()).default({}),
      })
      .optional(),
    /**
     * The whole message as MIME (RFC 5322), sent as is: `from` and `to` still make the
     * envelope. SES (`Raw`), Mailgun (`messages.mime`) and SMTP can send it; SendGrid cannot.
     */
    raw: z.string().min(1).max(10_000_000).optional(),
    priority: z
      .enum(PRIORITY_CLASSES, {
        message: `must be one of ${PRIORITY_CLASSES.join(', ')}`,
      })
      .default('normal'),
    stream: z.string().regex(NAME, { message: 'must match [A-Za-z0-9_-]{1,64}' }).default('transactional'),
    campaignId: z.string().regex(NAME, { message: 'must match [A-Za-z0-9_-]{1,64}' }).optional(),
    tenantId: z.string().regex(NAME, { message: 'must match [A-Za-z0-9_-]{1,64}' }).default('default'),
    idempotencyKey: z.string().min(1).max(256).optional(),
    expiresAt: z
      .union([z.number().int().positive(), z.iso.datetime({ offset: true }).transform((s) => Date.parse(s))])
      .optional(),
    headers: z
      .record(z.string().regex(HEADER_NAME, { message: 'is not a valid header name' }), line(2000))
      .superRefine((headers, ctx) => {
        for (const name of Object.keys(headers)) {
          if (RESERVED_HEADERS.has(name.toLowerCase())) {
            ctx.addIssue({ code: 'custom', path: [name], message: 'is set by Sluice and may not be given' });
          }
        }
      })
      .optional(),
    tags: z
      .record(
        z.string().regex(NAME, { message: 'must match [A-Za-z0-9_-]{1,64}' }),
        z.string().regex(/^[A-Za-z0-9_.@-]{0,256}$/, { message: 'must match [A-Za-z0-9_.@-]{0,256}' }),
      )
      .optional(),
  })
  .superRefine((m, ctx) => {
    const content = [
      m.text !== undefined || m.html !== undefined,
      m.template !== undefined,
      m.raw !== undefined,
    ].filter(Boolean).length;
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
}

/**
 * Validates a message; throws `SluiceError('invalid_message')` whose message and `path`
 * name the first bad field (prefixed by `pathPrefix`, as in `messages.3.to`).
 */
export function parseMessage(input: unknown, pathPrefix: readonly PropertyKey[] = []): Message {
  return parseInput(messageInputSchema, input, { code: 'invalid_message', what: 'message', pathPrefix });
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
