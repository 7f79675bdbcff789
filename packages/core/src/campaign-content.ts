import type HandlebarsModule from 'handlebars';
import { z } from 'zod';
import { SluiceError } from './errors.js';
import { messageFieldsSchema, type Message } from './message.js';
import { PROTOTYPE_KEYS, templateDataSchema, utf8Bytes } from './message-fields.js';
import { lazy } from './lazy.js';
import { parseInput } from './parse.js';

const handlebars = lazy<typeof HandlebarsModule>('handlebars');

/** A recipient's merge data: at most this many bytes as JSON (the job carries it). */
export const MAX_MERGE_DATA_BYTES = 16_384;

/** The parts of a message a campaign holds once, for every recipient. */
const CONTENT_FIELDS = ['from', 'replyTo', 'subject', 'text', 'html', 'headers', 'tags', 'stream'] as const;

/**
 * A campaign's content, stored once: from, subject and text/html as Handlebars templates
 * (`{{name}}` from each recipient's `data`, escaped in html; `{{{name}}}` unescaped), or an
 * ESP template by name (each recipient's `data` are its variables).
 */
export const campaignContentSchema = messageFieldsSchema
  .pick({ from: true, replyTo: true, subject: true, text: true, html: true, headers: true, tags: true, stream: true })
  .extend({
    template: z.strictObject({ name: messageFieldsSchema.shape.template.unwrap().shape.name }).optional(),
  })
  .strict()
  .superRefine((c, ctx) => {
    const bodies = c.text !== undefined || c.html !== undefined;
    if (bodies === (c.template !== undefined)) {
      ctx.addIssue({
        code: 'custom',
        path: [bodies ? 'template' : 'text'],
        message: bodies ? 'text/html and template are alternatives: give one' : 'needs text or html, or a template',
      });
    }
    if (c.template === undefined && c.subject === undefined) {
      ctx.addIssue({ code: 'custom', path: ['subject'], message: 'is required unless a template gives it' });
    }
  });

/** Input of a campaign's `content`. */
export type CampaignContentInput = z.input<typeof campaignContentSchema>;
/** A campaign's validated content. */
export type CampaignContent = z.output<typeof campaignContentSchema>;

/** One recipient of a campaign, as a backend injects it. */
export const recipientSchema = z.strictObject({
  to: messageFieldsSchema.shape.to,
  /** Its own merge data (template variables). */
  data: templateDataSchema
    .refine((d) => utf8Bytes(JSON.stringify(d)) <= MAX_MERGE_DATA_BYTES, {
      message: `must be at most ${MAX_MERGE_DATA_BYTES} bytes as JSON: pass ids, not documents`,
    })
    .optional(),
  /** The backend's own key for this recipient: carried on its record and outcome events. */
  key: z
    .string()
    .regex(/^[A-Za-z0-9_.@:-]{1,128}$/, { message: 'must match [A-Za-z0-9_.@:-]{1,128}' })
    .optional(),
  /**
   * The backend's cursor value at this recipient (a row id, an offset): stored with the
   * position, so a restarted producer can reopen its source there.
   */
  cursor: z
    .union([
      z.string().regex(/^[ -~]{1,128}$/, { message: 'must be 1–128 printable ASCII characters' }),
      z.number().finite(),
    ])
    .optional(),
});

/** Input of one recipient of `campaigns.inject`. */
export type RecipientInput = z.input<typeof recipientSchema>;
/** A validated recipient. */
export type Recipient = z.output<typeof recipientSchema>;

/** Validates a recipient; `invalid_recipient` names the field (`recipients.<position>.to`). */
export function parseRecipient(input: unknown, position: number): Recipient {
  const path = ['recipients', position];
  const reserved =
    typeof input === 'object' && input !== null ? Object.keys(input).find((k) => PROTOTYPE_KEYS.has(k)) : undefined;
  if (reserved !== undefined)
    throw new SluiceError(
      'invalid_recipient',
      `invalid recipient: recipients.${position}.${reserved}: is a reserved JavaScript name`,
      {
        path: `recipients.${position}.${reserved}`,
      },
    );
  return parseInput(recipientSchema, input, { code: 'invalid_recipient', what: 'recipient', pathPrefix: path });
}

/** Validates a campaign's content (errors name `content.<field>`), templates compiled to check their syntax. */
export function parseContent(input: unknown): CampaignContent {
  const content = parseInput(campaignContentSchema, input, {
    code: 'invalid_argument',
    what: 'campaign',
    pathPrefix: ['content'],
  });
  compileContent(content);
  return content;
}

/** The rendered parts of one recipient's message. */
export type RenderedContent = Pick<
  Message,
  'from' | 'replyTo' | 'subject' | 'text' | 'html' | 'headers' | 'tags' | 'template'
>;

/** A campaign's content with its templates compiled: renders one recipient's message. */
export interface CompiledContent {
  /**
   * The message parts for this recipient's data. A template that cannot render (a variable
   * the data lacks) throws `SluiceError('render_failed')` naming the field (`content.html`)
   * and the variable.
   */
  render(data: Record<string, unknown> | undefined): RenderedContent;
}

type Renderer = (data: Record<string, unknown>) => string;

/**
 * Compiles the templates of a campaign's content (Handlebars, strict: a variable missing
 * from a recipient's data fails that recipient rather than rendering blank). A syntax error
 * is `invalid_argument` naming the field.
 */
export function compileContent(content: CampaignContent): CompiledContent {
  const compile = (field: 'subject' | 'text' | 'html'): Renderer | undefined => {
    const source = content[field];
    if (source === undefined) return undefined;
    try {
      // compile() parses lazily, at the first render: precompile() finds a syntax error now.
      handlebars().precompile(source, { strict: true });
      return handlebars().compile(source, { strict: true, noEscape: field !== 'html' });
    } catch (error) {
      throw new SluiceError('invalid_argument', `invalid campaign: content.${field}: ${firstLine(error)}`, {
        path: `content.${field}`,
        cause: error,
      });
    }
  };
  const renderers = { subject: compile('subject'), text: compile('text'), html: compile('html') };
  return {
    render(data) {
      const vars = data ?? {};
      const out: RenderedContent = { from: content.from };
      for (const field of CONTENT_FIELDS) {
        if (field === 'subject' || field === 'text' || field === 'html' || field === 'stream') continue;
        if (content[field] !== undefined) Object.assign(out, { [field]: content[field] });
      }
      for (const field of ['subject', 'text', 'html'] as const) {
        const renderer = renderers[field];
        if (!renderer) continue;
        try {
          out[field] = renderer(vars);
        } catch (error) {
          throw new SluiceError('render_failed', `content.${field}: ${firstLine(error)}`, {
            path: `content.${field}`,
            cause: error,
          });
        }
      }
      if (content.template !== undefined) out.template = { name: content.template.name, data: vars as never };
      return out;
    },
  };
}

const firstLine = (error: unknown): string => (error instanceof Error ? error.message : String(error)).split('\n')[0]!;
