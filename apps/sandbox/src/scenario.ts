import { z } from 'zod';

/** Gmail's answer to a sender over its rate; the default {@link DomainBehaviour.throttleReply}. */
export const GMAIL_THROTTLE_REPLY =
  '421-4.7.28 [127.0.0.1] Our system has detected an unusual rate of unsolicited mail originating from your IP address. To protect our users from spam, mail sent from your IP address has been temporarily rate limited. Please visit https://support.google.com/mail/?p=UnsolicitedRateLimitError to review our Bulk Email Senders Guidelines. - gsmtp';

/**
 * What one recipient domain does with the mail sent to it.
 *
 * Address lists take exact addresses (case-insensitive) or globs where `*` matches any run of
 * characters, e.g. `bounce-*@example.com`. A recipient's own domain decides what happens to
 * it. On arrival the first that applies wins, in this order:
 * `dropBeforeData` > `bounce` > `block` > `busyRecipient` > `defer` > `fail` > `greylist` > `rate` > accept.
 * A refused message spends no rate token. `dropAfterData` then applies to an accepted message
 * once its data has arrived. `dropBeforeData`, `block`, `busyRecipient`, `defer` and `greylist` concern SMTP only:
 * the HTTP ESPs accept such mail, since a receiver's refusal comes back later by webhook.
 */
export interface DomainBehaviour {
  /**
   * Milliseconds added before the final answer: the HTTP response, or the SMTP reply to DATA
   * (SMTP refusals at RCPT come at once). @defaultValue `0`
   */
  latencyMs: number;
  /** Accepted messages per second; above it the answer is a throttle. Unset means no limit. */
  rate?: number;
  /** Messages accepted at once from idle. @defaultValue `max(1, rate)` when `rate` is set */
  burst?: number;
  /**
   * Recipients that hard-bounce: SES 400 `MessageRejected`, SendGrid and Mailgun 400, SMTP
   * `550 5.1.1` at RCPT. @defaultValue `[]`
   */
  bounce: string[];
  /** Recipients whose server refuses us by policy: SMTP `550 5.7.1` (a block list) at RCPT. @defaultValue `[]` */
  block: string[];
  /**
   * Recipients receiving mail faster than their mailbox takes it: SMTP `450 4.2.1` (Gmail's
   * per-recipient receiving rate) at RCPT, every time. @defaultValue `[]`
   */
  busyRecipient: string[];
  /**
   * SMTP: transactions for this domain's recipients in progress at once (from the RCPT accepted
   * to the answer to DATA); one more is refused at RCPT with Microsoft's `421 4.3.2` "maximum
   * number of concurrent server connections" and its connection closed. Unset means no limit.
   */
  maxConcurrent?: number;
  /** Recipients whose mailbox is over quota: SMTP `452 4.2.2` at RCPT. @defaultValue `[]` */
  defer: string[];
  /**
   * Recipients whose mail meets a transient system failure: SMTP `451 4.3.0` at RCPT, HTTP 500
   * on every ESP. @defaultValue `[]`
   */
  fail: string[];
  /**
   * SMTP: the first RCPT of each (MAIL FROM, RCPT TO) pair gets `451 4.7.1`; later attempts of
   * the pair pass. Pairs are remembered until `reset()` or `setScenario()`. @defaultValue `false`
   */
  greylist: boolean;
  /**
   * Recipients whose message is received in full and recorded as accepted (it was delivered),
   * after which the connection is destroyed without an answer: the sender cannot tell.
   * @defaultValue `[]`
   */
  dropAfterData: string[];
  /** SMTP: recipients at whose RCPT the connection is destroyed, before DATA. @defaultValue `[]` */
  dropBeforeData: string[];
  /**
   * SMTP reply when `rate` is exceeded, `"<code> <text>"` or `"<code>-<text>"`, with a 4xx or 5xx
   * code. A 421 closes the connection. @defaultValue {@link GMAIL_THROTTLE_REPLY}
   */
  throttleReply: string;
  /**
   * Share (0..1) of the messages accepted for this domain that later hard-bounce, reported by
   * the webhook of the ESP that took them (SMTP has none). Decided per message from a hash of
   * its id, so a run repeats exactly. @defaultValue `0`
   */
  bounceRate: number;
  /**
   * Share (0..1) of the accepted messages not bounced that the recipient reports as spam,
   * by webhook like {@link DomainBehaviour.bounceRate}. @defaultValue `0`
   */
  complaintRate: number;
}

/**
 * Where the sandbox posts the events of the messages it accepted, per ESP, signed as that ESP
 * signs them. An ESP without a URL reports nothing.
 */
export interface WebhookTargets {
  /** SNS notifications of SES event publishing, from topic `topicArn`. */
  ses?: { url: string; topicArn: string };
  /** SendGrid's signed Event Webhook. */
  sendgrid?: { url: string };
  /** Mailgun's signed webhooks. */
  mailgun?: { url: string };
  /** Milliseconds from acceptance to the report. @defaultValue `200` */
  reportDelayMs: number;
  /** Report a `delivered` event for every accepted message not bounced. @defaultValue `false` */
  reportDeliveries: boolean;
  /**
   * Milliseconds after which a report not answered 2xx (refused, timed out, connection lost)
   * is posted again, the same signed request, as the ESPs retry: SNS and SendGrid on any
   * failure, Mailgun on any but a 406 and never for a `delivered` event. Unset: posted once.
   */
  redeliverMs?: number;
  /** Redeliveries of one report at most, with `redeliverMs`. @defaultValue `10` */
  redeliveries: number;
}

/** What GetAccount reports. */
export interface AccountQuota {
  /** `SendQuota.MaxSendRate`. @defaultValue `1000` */
  maxSendRate: number;
  /** `SendQuota.Max24HourSend`; `-1` means unlimited, as in SES. @defaultValue `1000000` */
  max24HourSend: number;
  /** `SendingEnabled`. Reported only: sends are not refused when it is false. @defaultValue `true` */
  sendingEnabled: boolean;
}

/**
 * The ESP stops answering: connections are accepted and requests read, but no answer comes
 * until a scenario without it is installed (requests already hanging stay unanswered; their
 * clients time out). Every recipient domain alike: it is the ESP that is silent.
 */
export interface Silence {
  /** HTTP ESPs whose send requests (SES SendEmail, SendGrid mail/send, Mailgun messages) are read in full and never answered. @defaultValue `[]` */
  http: ('ses' | 'sendgrid' | 'mailgun')[];
  /**
   * SMTP: `before-data` sends no banner to a new connection and no answer to `MAIL FROM` on
   * an open one (no part of a message goes out: a safe retry); `after-data` reads the
   * message in full and never answers its final dot (it may have been delivered: ambiguous).
   * Unset: SMTP answers.
   */
  smtp?: 'before-data' | 'after-data';
  /**
   * A message read in full while silent is handled as usual (recorded as accepted when its
   * domain accepts it, so a resend is a duplicate) and only its answer is lost; `false`: it
   * is dropped unrecorded. @defaultValue `true`
   */
  deliver: boolean;
}

/** A validated scenario: how the sandbox behaves per recipient domain. */
export interface Scenario {
  account: AccountQuota;
  /** The ESP not answering at all. @defaultValue `{ http: [], deliver: true }`: it answers */
  silence: Silence;
  /** Behaviour of every domain not listed in `domains`. */
  default: DomainBehaviour;
  /** Behaviour per domain; keys are lower-case. A listed domain does not inherit `default`. */
  domains: Record<string, DomainBehaviour>;
  /** Where events are reported. @defaultValue `{ reportDelayMs: 200, reportDeliveries: false }` */
  webhooks: WebhookTargets;
}

/** Thrown when a scenario does not validate. `path` names the first bad field. */
export class ScenarioError extends Error {
  /** Stable code; the error is permanent until the scenario is fixed. */
  readonly code = 'invalid_scenario';
  /** Dotted field path, e.g. `domains.example.com.rate`, or `(root)`. */
  readonly path: string;

  constructor(message: string, path: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'ScenarioError';
    this.path = path;
  }
}

const addressList = z
  .array(z.string().min(1).includes('@', { message: 'must be an address or a glob with @' }))
  .default([]);

/** `421 text`, `421-4.7.28 text`: what an SMTP reply line looks like. */
const SMTP_REPLY = /^[45]\d\d[ -]\S/;

const domainBehaviourSchema = z
  .strictObject({
    latencyMs: z.number().int().min(0).max(600_000).default(0),
    rate: z.number().min(0, { message: 'must be a number of messages per second >= 0' }).optional(),
    burst: z.number().min(0, { message: 'must be a number >= 0' }).optional(),
    maxConcurrent: z.number().int().positive({ message: 'must be a whole number of transactions >= 1' }).optional(),
    bounce: addressList,
    block: addressList,
    busyRecipient: addressList,
    defer: addressList,
    fail: addressList,
    greylist: z.boolean().default(false),
    dropAfterData: addressList,
    dropBeforeData: addressList,
    throttleReply: z
      .string()
      .regex(SMTP_REPLY, { message: 'must be an SMTP reply "<4xx|5xx> <text>"' })
      .refine((reply) => !/[\r\n]/.test(reply), { message: 'must be one line' })
      .default(GMAIL_THROTTLE_REPLY),
    bounceRate: z.number().min(0).max(1).default(0),
    complaintRate: z.number().min(0).max(1).default(0),
  })
  .transform((b): DomainBehaviour => {
    const { rate, burst, ...rest } = b;
    const out: DomainBehaviour = rest;
    if (rate !== undefined) {
      out.rate = rate;
      out.burst = burst ?? Math.max(1, rate);
    } else if (burst !== undefined) {
      // Kept so a scenario round-trips, though without a rate there is no bucket to size.
      out.burst = burst;
    }
    return out;
  });

const webhookUrl = z.url({ protocol: /^https?$/, message: 'must be an http(s) URL' });

const webhooksSchema = z.strictObject({
  ses: z
    .strictObject({
      url: webhookUrl,
      topicArn: z.string().regex(/^arn:aws[a-z-]*:sns:/, { message: 'must be an SNS topic ARN' }),
    })
    .optional(),
  sendgrid: z.strictObject({ url: webhookUrl }).optional(),
  mailgun: z.strictObject({ url: webhookUrl }).optional(),
  reportDelayMs: z.number().int().min(0).max(600_000).default(200),
  reportDeliveries: z.boolean().default(false),
  redeliverMs: z.number().int().min(1).max(600_000).optional(),
  redeliveries: z.number().int().min(0).max(1000).default(10),
});

const DOMAIN = /^[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)*$/;

const scenarioSchema = z.strictObject({
  account: z
    .strictObject({
      maxSendRate: z.number().positive().default(1000),
      max24HourSend: z.number().min(-1).default(1_000_000),
      sendingEnabled: z.boolean().default(true),
    })
    .prefault({}),
  default: domainBehaviourSchema.prefault({}),
  domains: z.record(z.string().regex(DOMAIN, { message: 'must be a domain name' }), domainBehaviourSchema).default({}),
  webhooks: webhooksSchema.prefault({}),
  silence: z
    .strictObject({
      http: z.array(z.enum(['ses', 'sendgrid', 'mailgun'])).default([]),
      smtp: z.enum(['before-data', 'after-data']).optional(),
      deliver: z.boolean().default(true),
    })
    .prefault({}),
});

function formatPath(path: readonly PropertyKey[]): string {
  return path.length === 0 ? '(root)' : path.map(String).join('.');
}

/**
 * Validates a scenario (a parsed YAML or JSON value) and fills in defaults.
 * `undefined` and `null` mean the empty scenario: no limits, bounces, failures or latency.
 *
 * @throws {@link ScenarioError} naming the first bad field's path.
 */
export function parseScenario(input: unknown): Scenario {
  const result = scenarioSchema.safeParse(input ?? {});
  if (!result.success) {
    const issue = result.error.issues[0];
    let path: PropertyKey[] = issue?.path ?? [];
    let message = issue?.message ?? 'invalid';
    // zod reports unknown keys on the parent object; naming the key itself is what a reader needs.
    if (issue?.code === 'unrecognized_keys' && issue.keys[0] !== undefined) {
      path = [...path, issue.keys[0]];
      message = 'unknown key';
    }
    const more = result.error.issues.length > 1 ? ` (and ${result.error.issues.length - 1} more)` : '';
    const where = formatPath(path);
    throw new ScenarioError(`invalid scenario at ${where}: ${message}${more}`, where, { cause: result.error });
  }
  const { account, default: fallback, domains, webhooks, silence: quiet } = result.data;
  const lowered: Record<string, DomainBehaviour> = {};
  for (const [domain, behaviour] of Object.entries(domains)) {
    const key = domain.toLowerCase();
    // Domains are matched case-insensitively, so two spellings of one domain are ambiguous.
    if (Object.hasOwn(lowered, key)) {
      const where = `domains.${domain}`;
      throw new ScenarioError(`invalid scenario at ${where}: duplicates domain ${key}`, where);
    }
    lowered[key] = behaviour;
  }
  const targets: WebhookTargets = {
    reportDelayMs: webhooks.reportDelayMs,
    reportDeliveries: webhooks.reportDeliveries,
    redeliveries: webhooks.redeliveries,
  };
  if (webhooks.redeliverMs !== undefined) targets.redeliverMs = webhooks.redeliverMs;
  if (webhooks.ses) targets.ses = webhooks.ses;
  if (webhooks.sendgrid) targets.sendgrid = webhooks.sendgrid;
  if (webhooks.mailgun) targets.mailgun = webhooks.mailgun;
  const silence: Silence = { http: quiet.http, deliver: quiet.deliver };
  if (quiet.smtp !== undefined) silence.smtp = quiet.smtp;
  return { account, default: fallback, domains: lowered, webhooks: targets, silence };
}
