import { z } from 'zod';
import { isAddress } from './address.js';
import { mimeHeaders } from './mime.js';

/** The parts of a SendEmail request the sandbox acts on or records. */
export interface SendEmailRequest {
  from: string;
  to: string[];
  /** To, Cc and Bcc: every address that could bounce. */
  recipients: string[];
  subject: string | undefined;
  messageId: string | undefined;
  tags: Record<string, string>;
}

const nameValue = z.object({ Name: z.string(), Value: z.string() });
const address = z.string().refine(isAddress, { message: 'Illegal address' });

// Not strict: SES accepts many more optional fields than the sandbox needs to read.
const sendEmailSchema = z.object({
  FromEmailAddress: z.string().min(1),
  Destination: z.object({
    ToAddresses: z.array(address).min(1),
    CcAddresses: z.array(address).optional(),
    BccAddresses: z.array(address).optional(),
  }),
  Content: z
    .object({
      Simple: z
        .object({ Subject: z.object({ Data: z.string() }).optional(), Headers: z.array(nameValue).optional() })
        .optional(),
      Raw: z.object({ Data: z.base64() }).optional(),
      Template: z
        .object({
          TemplateContent: z.object({ Subject: z.string().optional() }).optional(),
          Headers: z.array(nameValue).optional(),
        })
        .optional(),
    })
    .refine((c) => [c.Simple, c.Raw, c.Template].filter((part) => part !== undefined).length === 1, {
      message: 'must contain exactly one of Simple, Raw or Template',
    }),
  EmailTags: z.array(nameValue).optional(),
});

function header(headers: readonly { Name: string; Value: string }[] | undefined, name: string): string | undefined {
  return headers?.find((h) => h.Name.toLowerCase() === name)?.Value;
}

/** Validates a parsed SendEmail body; on failure gives the BadRequestException message. */
export function parseSendEmail(
  body: unknown,
): { ok: true; request: SendEmailRequest } | { ok: false; message: string } {
  const result = sendEmailSchema.safeParse(body);
  if (!result.success) {
    const issue = result.error.issues[0];
    const path = issue?.path.length ? issue.path.map(String).join('.') : 'body';
    return { ok: false, message: `Invalid SendEmail request: ${path}: ${issue?.message ?? 'invalid'}` };
  }
  const { FromEmailAddress, Destination, Content, EmailTags } = result.data;
  let subject: string | undefined;
  let messageId: string | undefined;
  if (Content.Simple) {
    subject = Content.Simple.Subject?.Data;
    messageId = header(Content.Simple.Headers, 'message-id');
  } else if (Content.Template) {
    subject = Content.Template.TemplateContent?.Subject;
    messageId = header(Content.Template.Headers, 'message-id');
  } else if (Content.Raw) {
    const headers = mimeHeaders(Buffer.from(Content.Raw.Data, 'base64').toString('utf8'));
    subject = headers.get('subject');
    messageId = headers.get('message-id');
  }
  const tags: Record<string, string> = {};
  for (const tag of EmailTags ?? []) tags[tag.Name] = tag.Value;
  const to = Destination.ToAddresses;
  return {
    ok: true,
    request: {
      from: FromEmailAddress,
      to,
      recipients: [...to, ...(Destination.CcAddresses ?? []), ...(Destination.BccAddresses ?? [])],
      subject,
      messageId,
      tags,
    },
  };
}
