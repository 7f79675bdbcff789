import { z } from 'zod';
import { burst, host, name, rate, secret, url } from './config-fields.js';

// Where mail goes out: providers, the IP pools they send from, the routes that choose
// between them, failover, and the sandbox that stands in for a provider without credentials.

/** What every provider has, whatever its kind. */
const providerBase = {
  rate,
  burst: burst.optional(),
  /** Connection slots shared by every worker process. */
  concurrency: z.number().int().positive().default(16),
  /** IP pool this provider sends from (key into `pools`). */
  pool: name.default('default'),
  /** Per-request timeout (HTTP request, or each SMTP stage). */
  timeoutMs: z.number().int().positive().default(10_000),
  /** API endpoint (HTTP providers); unset means the real ESP. */
  endpoint: url.optional(),
  /**
   * Sends to the local sandbox ESP (`sandbox.url`, `sandbox.smtpHost`) instead of the real one:
   * its mail never leaves. A provider sends to a sandbox only when it says so; a real one
   * without credentials refuses to start. With `environment: production` a sandbox provider
   * is refused unless `allowSandbox` names it.
   * @defaultValue `false`
   */
  sandbox: z.boolean().default(false),
};

/**
 * What a pool is for. `active`: sends. `warming`: sends up to its warm-up schedule's daily
 * caps; beyond them its mail goes to an active pool of the same route. `standby`: warm and
 * idle, used only when failing over. `draining`: takes no new mail, finishes what it has.
 * `retired`: takes nothing.
 */
export const POOL_STATES = ['active', 'warming', 'standby', 'draining', 'retired'] as const;
/** A pool's state (see {@link POOL_STATES}). */
export type PoolState = (typeof POOL_STATES)[number];

/** One warm-up step: a daily cap per receiver (its bucket name, e.g. `google`); `*` for every other. */
const warmupStep = z
  .record(z.string().min(1), z.number().int().min(0))
  .refine((step) => '*' in step, { message: 'needs a cap for "*" (every other receiver)' });

const warmupSchema = z.strictObject({
  /** Daily caps, step by step; a step lasts `dayMs` and the next one comes only after a healthy day. */
  schedule: z.array(warmupStep).min(1),
  /** How long a step lasts. */
  dayMs: z.number().int().positive().default(86_400_000),
  /** What a healthy day is, over the pool's own signals that day. */
  healthy: z
    .strictObject({
      /** A day with fewer attempts tells nothing: the step is held. */
      minVolume: z.number().int().min(1).default(100),
      /** Hard and soft bounces over attempts. */
      bounceRate: z.number().min(0).max(1).default(0.05),
      /** Complaints over accepted. */
      complaintRate: z.number().min(0).max(1).default(0.001),
      /** Receivers' throttles and blocks over attempts. */
      throttleRate: z.number().min(0).max(1).default(0.05),
    })
    .prefault({}),
});

/** One IP pool: a rate of its own, a state, a warm-up schedule when warming. */
export const poolSchema = z
  .strictObject({
    rate: rate.optional(),
    burst: burst.optional(),
    /** What the pool is for (see `POOL_STATES`): `active`, `warming`, `standby`, `draining` or `retired`. */
    state: z.enum(POOL_STATES).default('active'),
    /** The warm-up schedule of a `warming` pool (and only of one). */
    warmup: warmupSchema.optional(),
  })
  .superRefine((p, ctx) => {
    if ((p.state === 'warming') !== (p.warmup !== undefined)) {
      ctx.addIssue({
        code: 'custom',
        path: ['warmup'],
        message: 'a warming pool needs a warmup schedule, and only a warming pool has one',
      });
    }
  });

/** One provider, by `kind`: SES, SendGrid, Mailgun or SMTP. */
export const providerSchema = z.discriminatedUnion(
  'kind',
  [
    z.strictObject({
      /** Which adapter sends for this provider. */
      kind: z.literal('ses'),
      ...providerBase,
      region: z.string().min(1).default('us-east-1'),
      /**
       * Static keys. Without them a real SES provider takes the AWS default credential chain:
       * `AWS_ACCESS_KEY_ID`/`AWS_SECRET_ACCESS_KEY`/`AWS_SESSION_TOKEN`, SSO, web identity (EKS),
       * `AWS_PROFILE` and the shared files, ECS and EC2 instance roles.
       */
      accessKeyId: secret.optional(),
      secretAccessKey: secret.optional(),
      /** With static keys that are temporary (from STS). */
      sessionToken: secret.optional(),
      configurationSetName: z.string().min(1).optional(),
      /** How often `GetAccount` is read for the send quota (never configured above `MaxSendRate`). */
      quotaRefreshMs: z.number().int().positive().default(60_000),
    }),
    z.strictObject({
      kind: z.literal('sendgrid'),
      ...providerBase,
      /** `SG.…`; else `SENDGRID_API_KEY`; a real provider with neither refuses to start. */
      apiKey: secret.optional(),
      /** `ip_pool_name` on every send. */
      ipPoolName: z.string().min(2).max(64).optional(),
    }),
    z.strictObject({
      kind: z.literal('mailgun'),
      ...providerBase,
      /** The sending domain: `POST /v3/<domain>/messages`. */
      domain: host,
      /** Else `MAILGUN_API_KEY`; a real provider with neither refuses to start. */
      apiKey: secret.optional(),
    }),
    z.strictObject({
      kind: z.literal('smtp'),
      ...providerBase,
      /** The smarthost or MX; required unless `sandbox: true` (then the sandbox's SMTP port). */
      host: host.optional(),
      port: z.number().int().min(1).max(65535).default(587),
      /** Implicit TLS (port 465); otherwise STARTTLS when offered. */
      secure: z.boolean().default(false),
      user: secret.optional(),
      /** Else `SMTP_PASSWORD`. */
      password: secret.optional(),
      /** Messages per pooled connection before it is recycled. */
      maxMessages: z.number().int().positive().default(100),
      /**
       * Campaign recipients one transaction may carry (RCPTs before one DATA), when their
       * rendered messages are the same and their domain is one: the receiver answers each
       * RCPT, then once for all after the data. 1 (the default) sends every recipient alone.
       * Above 1, a shared message cannot name its recipient: its `To` is
       * `undisclosed-recipients:;` and its `Message-ID` the first recipient's, so turn it on
       * only for content that names nobody (docs/design/batches.md).
       * @defaultValue `1`
       */
      recipientsPerTransaction: z.number().int().min(1).max(1000).default(1),
    }),
  ],
  {
    error: (issue) => (issue.code === 'invalid_union' ? 'kind must be one of ses, sendgrid, mailgun, smtp' : undefined),
  },
);

/**
 * Providers per stream (`message.stream`), chosen by weight. A stream without a route
 * goes to `defaultProvider`. A provider that is down, paused (SES daily quota) or
 * throttled hard is skipped while another in the route is available (failover).
 */
export const routesSchema = z
  .record(
    name,
    z
      .array(
        z.strictObject({
          /** A key of `providers`. */
          provider: name,
          /** Its share of the stream's mail, relative to the others' weights. */
          weight: z.number().min(0).default(1),
        }),
      )
      .min(1),
  )
  .default({});

/** When a provider counts as down or throttled hard, so its routes skip it. */
export const failoverSchema = z
  .strictObject({
    /** Consecutive failures without an answer (or 5xx) after which a provider counts as down. */
    downAfter: z.number().int().positive().default(5),
    /** How long a provider counts as down before it is tried again. */
    downForMs: z.number().int().positive().default(30_000),
    /** A provider whose rate is lowered to this share or less counts as throttled hard. */
    throttledBelow: z.number().gt(0).max(1).default(0.25),
  })
  .prefault({});

/** The local sandbox ESP (`apps/sandbox`): where providers with `sandbox: true` send. */
export const sandboxSchema = z
  .strictObject({
    /** The sandbox's HTTP API (SES v2, SendGrid v3, Mailgun v3). */
    url: url.default('http://127.0.0.1:4566'),
    /** The sandbox's SMTP listener, for SMTP providers without a host. */
    smtpHost: host.default('127.0.0.1'),
    /** The sandbox's SMTP port. */
    smtpPort: z.number().int().min(1).max(65535).default(2525),
  })
  .prefault({});
