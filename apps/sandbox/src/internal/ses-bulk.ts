import type { ServerResponse } from 'node:http';
import { z } from 'zod';
import type { AcceptedMessage } from '../recorder.js';
import { domainOf, isAddress } from './address.js';
import type { Arrival, EmailTemplate, SandboxContext } from './context.js';
import { parseJson, sendJson, sendSesError } from './http.js';
import type { Decision } from './policy.js';

// SES v2's templates and SendBulkEmail, as the SDK speaks them: `POST /v2/email/templates`
// (CreateEmailTemplate), `GET`/`DELETE /v2/email/templates/{name}`, and
// `POST /v2/email/outbound-bulk-emails`. A bulk call answers 200 with one result per entry, in
// order: SUCCESS with a MessageId, or a status of its own (MESSAGE_REJECTED for a hard bounce,
// ACCOUNT_THROTTLED past the domain's rate, TRANSIENT_FAILURE, TEMPLATE_NOT_FOUND,
// ACCOUNT_DAILY_QUOTA_EXCEEDED). Each entry is decided as its own message would be.

/** At most this many entries a call, as SES allows. */
export const SES_BULK_MAX_ENTRIES = 50;
const DAY_MS = 24 * 60 * 60 * 1000;

const nameValue = z.object({ Name: z.string(), Value: z.string() });
const address = z.string().refine(isAddress, { message: 'Illegal address' });
const templateContent = z.object({
  Subject: z.string().optional(),
  Text: z.string().optional(),
  Html: z.string().optional(),
});
const templateName = z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, { message: 'must be 1-64 of [A-Za-z0-9_-]' });

const createTemplateSchema = z.object({ TemplateName: templateName, TemplateContent: templateContent });

const bulkSchema = z.object({
  FromEmailAddress: z.string().min(1),
  DefaultEmailTags: z.array(nameValue).optional(),
  DefaultContent: z.object({
    Template: z
      .object({
        TemplateName: templateName.optional(),
        TemplateArn: z.string().optional(),
        TemplateContent: templateContent.optional(),
        TemplateData: z.string().optional(),
        Headers: z.array(nameValue).optional(),
      })
      .refine((t) => [t.TemplateName, t.TemplateArn, t.TemplateContent].filter((x) => x !== undefined).length === 1, {
        message: 'must contain exactly one of TemplateName, TemplateArn or TemplateContent',
      }),
  }),
  BulkEmailEntries: z
    .array(
      z.object({
        Destination: z.object({
          ToAddresses: z.array(address).min(1),
          CcAddresses: z.array(address).optional(),
          BccAddresses: z.array(address).optional(),
        }),
        ReplacementTags: z.array(nameValue).optional(),
        ReplacementEmailContent: z
          .object({ ReplacementTemplate: z.object({ ReplacementTemplateData: z.string().optional() }).optional() })
          .optional(),
        ReplacementHeaders: z.array(nameValue).optional(),
      }),
    )
    .min(1)
    .max(SES_BULK_MAX_ENTRIES, { message: `at most ${SES_BULK_MAX_ENTRIES} entries` }),
});

/** The first issue of a failed parse, as SES's BadRequestException words it. */
function invalid(what: string, error: z.ZodError): string {
  const issue = error.issues[0];
  const path = issue?.path.length ? issue.path.map(String).join('.') : 'body';
  return `Invalid ${what} request: ${path}: ${issue?.message ?? 'invalid'}`;
}

/** `POST /v2/email/templates`. */
export function createTemplate(ctx: SandboxContext, arrival: Arrival, res: ServerResponse): void {
  const json = parseJson(arrival.body);
  const parsed = json.ok ? createTemplateSchema.safeParse(json.value) : undefined;
  if (!parsed?.success) {
    const message = parsed ? invalid('CreateEmailTemplate', parsed.error) : 'Request body is not valid JSON.';
    sendSesError(res, 400, 'BadRequestException', message);
    return;
  }
  const { TemplateName, TemplateContent } = parsed.data;
  if (ctx.templates.has(TemplateName)) {
    sendSesError(res, 400, 'AlreadyExistsException', `Template ${TemplateName} already exists.`);
    return;
  }
  ctx.templates.set(TemplateName, TemplateContent);
  sendJson(res, 200, {});
}

/** `GET` or `DELETE /v2/email/templates/{name}`. */
export function templateByName(ctx: SandboxContext, method: string, name: string, res: ServerResponse): void {
  const template = ctx.templates.get(name);
  if (template === undefined) {
    sendSesError(res, 404, 'NotFoundException', `Template ${name} does not exist.`);
    return;
  }
  if (method === 'DELETE') {
    ctx.templates.delete(name);
    sendJson(res, 200, {});
    return;
  }
  sendJson(res, 200, { TemplateName: name, TemplateContent: template });
}

/** `{{name}}` (or `{{a.b}}`) replaced by the data's value; a missing one renders empty, as SES's would fail. */
export function render(text: string | undefined, data: Record<string, unknown>): string | undefined {
  return text?.replace(/\{\{\s*([\w.]+)\s*\}\}/g, (_, path: string) => {
    const value = path.split('.').reduce<unknown>((v, k) => (v as Record<string, unknown> | undefined)?.[k], data);
    if (typeof value === 'string') return value;
    if (typeof value === 'number' || typeof value === 'boolean') return String(value);
    return value === undefined || value === null ? '' : JSON.stringify(value);
  });
}

function jsonObject(text: string | undefined): Record<string, unknown> {
  if (text === undefined) return {};
  const value: unknown = JSON.parse(text);
  return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : {};
}

type EntryResult = { Status: string; MessageId?: string; Error?: string };
type BulkRequest = z.infer<typeof bulkSchema>;
type BulkEntry = BulkRequest['BulkEmailEntries'][number];

/** What every entry of one call shares: the request, its template and defaults, the day's count. */
interface BulkCall {
  request: BulkRequest;
  content: EmailTemplate | undefined;
  defaults: Record<string, unknown>;
  defaultTags: Record<string, string>;
  /** Messages accepted in the last 24 h, -1 when the account has no daily quota. */
  sentToday: number;
  arrival: Arrival;
  newMessageId: (now: number) => string;
}

/** The parsed call, or the BadRequestException message that refuses it whole. */
function parseBulk(arrival: Arrival): { request: BulkRequest; defaults: Record<string, unknown> } | string {
  const json = parseJson(arrival.body);
  const parsed = json.ok ? bulkSchema.safeParse(json.value) : undefined;
  if (!parsed?.success) return parsed ? invalid('SendBulkEmail', parsed.error) : 'Request body is not valid JSON.';
  try {
    return { request: parsed.data, defaults: jsonObject(parsed.data.DefaultContent.Template.TemplateData) };
  } catch {
    return 'Invalid SendBulkEmail request: DefaultContent.Template.TemplateData: not JSON';
  }
}

/** One entry decided as its own message would be: its result, and the message when accepted. */
function decideEntry(
  ctx: SandboxContext,
  call: BulkCall,
  entry: BulkEntry,
): { result: EntryResult; decision?: Decision; message?: AcceptedMessage } {
  const to = entry.Destination.ToAddresses;
  const domain = domainOf(to[0] ?? '');
  const { content, arrival } = call;
  if (content === undefined) return { result: { Status: 'TEMPLATE_NOT_FOUND', Error: 'Template does not exist.' } };
  const { max24HourSend } = ctx.scenario().account;
  if (max24HourSend >= 0 && call.sentToday >= max24HourSend) {
    ctx.recorder.count(domain, 'throttled');
    return { result: { Status: 'ACCOUNT_DAILY_QUOTA_EXCEEDED', Error: 'Daily message quota exceeded.' } };
  }
  let data: Record<string, unknown>;
  try {
    data = {
      ...call.defaults,
      ...jsonObject(entry.ReplacementEmailContent?.ReplacementTemplate?.ReplacementTemplateData),
    };
  } catch {
    return { result: { Status: 'INVALID_PARAMETER', Error: 'ReplacementTemplateData is not JSON.' } };
  }
  const recipients = [...to, ...(entry.Destination.CcAddresses ?? []), ...(entry.Destination.BccAddresses ?? [])];
  const decision = ctx.policy().decide(domain, recipients, arrival.arrivedMono);
  if (decision.kind === 'bounce') {
    ctx.recorder.count(domain, 'rejected');
    const error = `Email address rejected: ${decision.address} (hard bounce)`;
    return { decision, result: { Status: 'MESSAGE_REJECTED', Error: error } };
  }
  if (decision.kind === 'fail') {
    ctx.recorder.count(domain, 'deferred');
    return { decision, result: { Status: 'TRANSIENT_FAILURE', Error: 'The request processing has failed.' } };
  }
  if (decision.kind === 'throttle') {
    ctx.recorder.count(domain, 'throttled');
    return { decision, result: { Status: 'ACCOUNT_THROTTLED', Error: 'Maximum sending rate exceeded.' } };
  }
  const id = call.newMessageId(arrival.arrivedAt);
  const tags = {
    ...call.defaultTags,
    ...Object.fromEntries((entry.ReplacementTags ?? []).map((t) => [t.Name, t.Value])),
  };
  const headers = [...(call.request.DefaultContent.Template.Headers ?? []), ...(entry.ReplacementHeaders ?? [])];
  const message: AcceptedMessage = {
    protocol: 'ses',
    providerMessageId: id,
    messageId: headers.findLast((h) => h.Name.toLowerCase() === 'message-id')?.Value,
    sluiceId: tags.sluice_id,
    from: call.request.FromEmailAddress,
    to,
    subject: render(content.Subject, data),
    domain,
    arrivedAt: arrival.arrivedAt,
    tags,
  };
  call.sentToday += 1;
  return { decision, message, result: { Status: 'SUCCESS', MessageId: id } };
}

/** `POST /v2/email/outbound-bulk-emails`: each entry decided on arrival, answered together. */
export async function sendBulkEmail(
  ctx: SandboxContext,
  arrival: Arrival,
  res: ServerResponse,
  newMessageId: (now: number) => string,
): Promise<void> {
  const parsed = parseBulk(arrival);
  if (typeof parsed === 'string') {
    sendSesError(res, 400, 'BadRequestException', parsed);
    return;
  }
  const { request, defaults } = parsed;
  const template = request.DefaultContent.Template;
  const { max24HourSend } = ctx.scenario().account;
  const call: BulkCall = {
    request,
    defaults,
    content:
      template.TemplateContent ??
      ctx.templates.get(template.TemplateName ?? template.TemplateArn?.split('/').pop() ?? ''),
    defaultTags: Object.fromEntries((request.DefaultEmailTags ?? []).map((t) => [t.Name, t.Value])),
    sentToday: max24HourSend >= 0 ? ctx.recorder.acceptedSince(arrival.arrivedAt - DAY_MS, 'ses') : -1,
    arrival,
    newMessageId,
  };
  const decided = request.BulkEmailEntries.map((entry) => decideEntry(ctx, call, entry));
  const accepted = decided.flatMap(({ message, decision }) => (message && decision ? [{ message, decision }] : []));
  for (const { message } of accepted) {
    ctx.recorder.accept(message);
    ctx.report(message);
  }
  // An entry the scenario drops after its data drops the whole call: the client hears nothing.
  if (accepted.some(({ decision }) => decision.kind === 'accept' && decision.dropAfterData)) {
    for (const { message, decision } of accepted) {
      if (decision.kind === 'accept' && decision.dropAfterData) ctx.recorder.count(message.domain, 'dropped');
    }
    res.destroy();
    return;
  }
  await ctx.wait(Math.max(0, ...decided.map(({ decision }) => decision?.latencyMs ?? 0)));
  sendJson(res, 200, { BulkEmailEntryResults: decided.map(({ result }) => result) });
}
