import { z } from 'zod';
import { RETRY_FAMILIES, type RetryFamily } from './families.js';
import { governorSchema } from './governor-config.js';
import { BUILT_IN_ORGANISATIONS } from './organisations.js';
import { parseInput } from './parse.js';

const NAME = /^[A-Za-z0-9_-]{1,64}$/;
const name = z.string().regex(NAME, { message: 'must match [A-Za-z0-9_-]{1,64}' });
const rate = z.number().positive({ message: 'must be a positive number of messages per second' });
const burst = z.number().int().positive({ message: 'must be a positive integer' });

/** A rate limit: `rate` per second, up to `burst` at once from idle. */
const limitSchema = z.strictObject({ rate, burst: burst.optional() });

const perClass = <T extends z.ZodType>(value: T) =>
  z.strictObject({ critical: value, high: value, normal: value, low: value });

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
  /** API endpoint (HTTP providers); unset means the real ESP, or the sandbox when no credentials are configured. */
  endpoint: z.url().optional(),
};

const secret = z.string().min(1);

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
const warmupStep = z.record(z.string().min(1), z.number().int().min(0)).refine((step) => '*' in step, { message: 'needs a cap for "*" (every other receiver)' });

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

const poolSchema = z
  .strictObject({
    rate: rate.optional(),
    burst: burst.optional(),
    state: z.enum(POOL_STATES).default('active'),
    warmup: warmupSchema.optional(),
  })
  .superRefine((p, ctx) => {
    if ((p.state === 'warming') !== (p.warmup !== undefined)) {
      ctx.addIssue({ code: 'custom', path: ['warmup'], message: 'a warming pool needs a warmup schedule, and only a warming pool has one' });
    }
  });

function validRegExp(pattern: string): boolean {
  try {
    new RegExp(pattern);
    return true;
  } catch {
    return false;
  }
}

const providerSchema = z.discriminatedUnion(
  'kind',
  [
    z.strictObject({
      /** Which adapter sends for this provider. */
      kind: z.literal('ses'),
      ...providerBase,
      region: z.string().min(1).default('us-east-1'),
      accessKeyId: secret.optional(),
      secretAccessKey: secret.optional(),
      configurationSetName: z.string().min(1).optional(),
      /** How often `GetAccount` is read for the send quota (never configured above `MaxSendRate`). */
      quotaRefreshMs: z.number().int().positive().default(60_000),
    }),
    z.strictObject({
      kind: z.literal('sendgrid'),
      ...providerBase,
      /** `SG.…`; else `SENDGRID_API_KEY`; neither means the sandbox. */
      apiKey: secret.optional(),
      /** `ip_pool_name` on every send. */
      ipPoolName: z.string().min(2).max(64).optional(),
    }),
    z.strictObject({
      kind: z.literal('mailgun'),
      ...providerBase,
      /** The sending domain: `POST /v3/<domain>/messages`. */
      domain: z.string().min(1),
      /** Else `MAILGUN_API_KEY`; neither means the sandbox. */
      apiKey: secret.optional(),
    }),
    z.strictObject({
      kind: z.literal('smtp'),
      ...providerBase,
      /** The smarthost or MX; unset means the sandbox's SMTP port. */
      host: z.string().min(1).optional(),
      port: z.number().int().min(1).max(65535).default(587),
      /** Implicit TLS (port 465); otherwise STARTTLS when offered. */
      secure: z.boolean().default(false),
      user: secret.optional(),
      /** Else `SMTP_PASSWORD`. */
      password: secret.optional(),
      /** Messages per pooled connection before it is recycled. */
      maxMessages: z.number().int().positive().default(100),
    }),
  ],
  { error: (issue) => (issue.code === 'invalid_union' ? 'kind must be one of ses, sendgrid, mailgun, smtp' : undefined) },
);

const receiverSchema = z.strictObject({
  /** The receiving organisation's key: one bucket for all its domains. */
  name,
  /** Exact domains, or `*.example.com` for a domain and its subdomains. Needed unless `organisation` is set. */
  domains: z.array(z.string().min(1).toLowerCase()).min(1).optional(),
  /** An organisation (`organisations`): every domain whose MX hosts are that organisation's. */
  organisation: name.optional(),
  rate,
  burst: burst.optional(),
});

const organisationPatternSchema = z.strictObject({
  name,
  /** MX host globs: `*` matches any characters, dots included (`*.mail.protection.outlook.com`). */
  mx: z.array(z.string().min(1).toLowerCase()).min(1),
});

const retryScheduleSchema = z.strictObject({
  baseMs: z.number().int().positive(),
  maxMs: z.number().int().positive(),
  maxAttempts: z.number().int().min(1).max(100),
});
/** How one family is retried. */
export type RetrySchedule = z.output<typeof retryScheduleSchema>;

/**
 * Default schedules. Throttles come back soon (the key's rate is lowered meanwhile);
 * greylisting wants a few minutes (Postgrey's default delay is 300 s); a reputation
 * deferral or a full mailbox does not clear in seconds; `unknown` is temporary with a low
 * cap, so a misread permanent failure is not retried for days.
 */
export const RETRY_DEFAULTS: Readonly<Record<RetryFamily, RetrySchedule>> = {
  throttled: { baseMs: 1_000, maxMs: 60_000, maxAttempts: 30 },
  // The provider is paused meanwhile, so admission holds the message (or routes it to
  // another provider): its own wait can be short.
  quota_exhausted: { baseMs: 1_000, maxMs: 60_000, maxAttempts: 48 },
  greylisted: { baseMs: 300_000, maxMs: 1_800_000, maxAttempts: 5 },
  reputation_deferral: { baseMs: 300_000, maxMs: 3_600_000, maxAttempts: 8 },
  mailbox_temporary: { baseMs: 600_000, maxMs: 4 * 3_600_000, maxAttempts: 6 },
  transient_system: { baseMs: 1_000, maxMs: 600_000, maxAttempts: 8 },
  sender_config: { baseMs: 60_000, maxMs: 600_000, maxAttempts: 10 },
  unknown: { baseMs: 30_000, maxMs: 600_000, maxAttempts: 3 },
  ambiguous: { baseMs: 5_000, maxMs: 60_000, maxAttempts: 3 },
};

/** The config file's schema (YAML). Every field has a default, so `{}` is a valid config. */
export const configSchema = z
  .strictObject({
    redis: z
      .strictObject({
        url: z.string().min(1).default('redis://127.0.0.1:6379'),
        prefix: name.default('sluice'),
      })
      .prefault({}),
    defaultProvider: name.default('ses'),
    providers: z
      .record(name, providerSchema)
      .default({ ses: providerSchema.parse({ kind: 'ses', rate: 50, burst: 10, concurrency: 16 }) }),
    /** IP pools (DESIGN.md, IP pools and warm-up): a rate of their own, a state, a warm-up schedule. */
    pools: z.record(name, poolSchema).default({ default: { state: 'active' } }),
    receivers: z.array(receiverSchema).default([]),
    /**
     * Receiving organisations by MX host (DESIGN.md, check order 5): a domain whose MX
     * hosts are Google's shares Google's receiver bucket. Looked up by the scheduler only.
     */
    organisations: z
      .strictObject({
        /** Extra organisations, matched before the built-in table. */
        patterns: z.array(organisationPatternSchema).default([]),
        /** Use the built-in table (`BUILT_IN_ORGANISATIONS`, `ORGANISATIONS_VERSION`). */
        builtIn: z.boolean().default(true),
        /** How long a domain's answer is kept. */
        cacheTtlMs: z.number().int().positive().default(3_600_000),
        /** How long a failed lookup, NXDOMAIN or no MX leaves the domain standing alone before asking again. */
        negativeTtlMs: z.number().int().positive().default(300_000),
        /** Domains kept in the cache (least recently used go first). */
        cacheSize: z.number().int().positive().default(100_000),
        /** `host:port` of the DNS servers to ask; empty means the system's resolver. */
        dnsServers: z.array(z.string().min(1)).default([]),
        /** Per lookup: a domain whose DNS is slower stands alone for `negativeTtlMs`. */
        timeoutMs: z.number().int().positive().default(2_000),
      })
      .prefault({}),
    reserves: z
      .strictObject({ critical: z.number().min(0).max(0.9).default(0.2), high: z.number().min(0).max(0.9).default(0) })
      .prefault({}),
    /**
     * Of every layer's burst, this many ms of sends are held back as slack for the jitter
     * between admission and arrival, so arrivals stay within rate + burst in any second.
     */
    jitterSlackMs: z.number().int().min(0).default(50),
    /** How far ahead each class may book a slot: short, so booked bulk never holds a later OTP or an idle layer long. */
    horizonsMs: perClass(z.number().int().min(0)).default({
      critical: 1_000,
      high: 1_000,
      normal: 1_000,
      low: 1_000,
    }),
    defaults: z
      .strictObject({
        receiver: limitSchema.partial().default({}),
        campaign: limitSchema.partial().default({ rate: 1000 }),
        tenant: limitSchema.partial().default({}),
      })
      .prefault({}),
    delivery: z
      .strictObject({
        /** Attempts of one message, over every family: the ceiling above the per-family caps. */
        maxAttempts: z.number().int().min(1).max(100).default(12),
        /**
         * Retry schedule per reply family (see `RETRY_DEFAULTS`): exponential backoff with
         * jitter from `baseMs`, capped at `maxMs`; the `maxAttempts`-th failure of that
         * family is the last. A reply's own hint (Retry-After…) wins when longer. Permanent families
         * are never retried, whatever is set here.
         */
        retry: z
          .partialRecord(z.enum(RETRY_FAMILIES), retryScheduleSchema.partial())
          .default({})
          .transform((given) => {
            const out = {} as Record<RetryFamily, RetrySchedule>;
            for (const f of RETRY_FAMILIES) out[f] = { ...RETRY_DEFAULTS[f], ...given[f] };
            return out;
          }),
        lifetimeMs: perClass(z.number().int().positive()).default({
          critical: 15 * 60_000,
          high: 60 * 60_000,
          normal: 24 * 3_600_000,
          low: 72 * 3_600_000,
        }),
        /**
         * A request that went out in full but whose answer was lost (its worker died, the
         * connection broke) may have been accepted: resend it (same Message-ID; an OTP must
         * arrive) or count it as sent (a newsletter must not arrive twice).
         */
        onAmbiguous: perClass(z.enum(['resend', 'assume-sent'])).default({
          critical: 'resend',
          high: 'resend',
          normal: 'assume-sent',
          low: 'assume-sent',
        }),
        recordTtlSeconds: z.number().int().positive().default(7 * 86_400),
      })
      .prefault({}),
    /**
     * A throttle (HTTP 429, SMTP 421 4.7.28…) lowers that key's effective rate for a while:
     * the provider's for a provider's throttle, the receiver's for a receiver's.
     */
    backpressure: z
      .strictObject({
        /** Each throttle multiplies the key's rate by this (at most once per `cooldownMs`). */
        factor: z.number().gt(0).lt(1).default(0.5),
        /** Never below this share of the configured rate. */
        minFactor: z.number().gt(0).max(1).default(0.05),
        /** Throttles closer together than this count as one (the answers of one burst). */
        cooldownMs: z.number().int().min(0).default(2_000),
        /** The lowered rate holds this long after the last throttle, then doubles every `holdMs` back to full. */
        holdMs: z.number().int().positive().default(30_000),
      })
      .prefault({}),
    /**
     * Providers per stream (`message.stream`), chosen by weight. A stream without a route
     * goes to `defaultProvider`. A provider that is down, paused (SES daily quota) or
     * throttled hard is skipped while another in the route is available (failover).
     */
    routes: z
      .record(name, z.array(z.strictObject({ provider: name, weight: z.number().min(0).default(1) })).min(1))
      .default({}),
    /** Rules over the signals that lower, restore and pause keys (DESIGN.md, The feedback loop). */
    governor: governorSchema.prefault({}),
    failover: z
      .strictObject({
        /** Consecutive failures without an answer (or 5xx) after which a provider counts as down. */
        downAfter: z.number().int().positive().default(5),
        /** How long a provider counts as down before it is tried again. */
        downForMs: z.number().int().positive().default(30_000),
        /** A provider whose rate is lowered to this share or less counts as throttled hard. */
        throttledBelow: z.number().gt(0).max(1).default(0.25),
      })
      .prefault({}),
    scheduler: z
      .strictObject({
        concurrency: z.number().int().positive().default(16),
      })
      .prefault({}),
    worker: z
      .strictObject({
        concurrency: perClass(z.number().int().positive()).default({ critical: 4, high: 4, normal: 8, low: 8 }),
        drainTimeoutMs: z.number().int().positive().default(30_000),
        /**
         * A message first picked up this long after its admitted slot (no worker was free,
         * or none ran) asks the limiter again before it is sent. A little lateness is what
         * a bucket's burst absorbs; much more would crowd a later second's sends (after an
         * outage, a whole backlog of passed slots at once). Asking again wastes the missed
         * slot, so this is not set lower than workers are usually late.
         */
        lateAfterMs: z.number().int().positive().default(250),
        lockDurationMs: z.number().int().positive().default(30_000),
        stalledIntervalMs: z.number().int().positive().default(30_000),
      })
      .prefault({}),
    sandbox: z
      .strictObject({
        /** The sandbox's HTTP API (SES v2, SendGrid v3, Mailgun v3). */
        url: z.url().default('http://127.0.0.1:4566'),
        /** The sandbox's SMTP listener, for SMTP providers without a host. */
        smtpHost: z.string().min(1).default('127.0.0.1'),
        smtpPort: z.number().int().min(1).max(65535).default(2525),
      })
      .prefault({}),
    /** Suppression from delivery feedback (ESP webhooks). */
    suppression: z
      .strictObject({
        /**
         * Soft bounces (a temporary failure the ESP gave up on) of one address suppress it
         * once `count` of them fall within `windowMs`: one full mailbox is not a dead one.
         */
        softBounces: z
          .strictObject({
            count: z.number().int().min(1).max(1000).default(3),
            windowMs: z.number().int().positive().default(7 * 86_400_000),
          })
          .prefault({}),
      })
      .prefault({}),
    /**
     * The admin app (`apps/admin`): Bull Board, the ops dashboard and overrides. It refuses
     * to start without credentials (`tokens`, or `SLUICE_ADMIN_TOKENS`: `actor:token,…`),
     * unless `devNoAuth` is set and it listens on loopback.
     */
    admin: z
      .strictObject({
        host: z.string().min(1).default('127.0.0.1'),
        port: z.number().int().min(0).max(65535).default(8090),
        /** Bearer tokens (at least 32 characters), each naming the actor it stands for in the audit trail. */
        tokens: z.array(z.strictObject({ actor: name, token: z.string().min(32, { message: 'must be at least 32 characters' }) })).default([]),
        /** Development only: no authentication, allowed only on a loopback host. */
        devNoAuth: z.boolean().default(false),
      })
      .prefault({}),
    /**
     * Prometheus `/metrics`. The api and admin apps serve it on their own port; a scheduler
     * or worker serves it on `port` (or `SLUICE_METRICS_PORT`) when one is given.
     */
    metrics: z
      .strictObject({
        host: z.string().min(1).default('127.0.0.1'),
        port: z.number().int().min(0).max(65535).optional(),
      })
      .prefault({}),
    /** Logs: credentials are always redacted; recipient addresses are hashed unless `recipients: plain`. */
    logging: z
      .strictObject({
        recipients: z.enum(['hashed', 'plain']).default('hashed'),
      })
      .prefault({}),
    /** The HTTP API (`apps/api`): ESP webhooks. */
    api: z
      .strictObject({
        host: z.string().min(1).default('127.0.0.1'),
        port: z.number().int().min(0).max(65535).default(8080),
        webhooks: z
          .strictObject({
            /** SES events through SNS. No topic configured: the route refuses everything. */
            ses: z
              .strictObject({
                /** The only SNS topics accepted. */
                topicArns: z.array(z.string().regex(/^arn:aws[a-z-]*:sns:/, { message: 'must be an SNS topic ARN' })).default([]),
                /** Hosts allowed for SigningCertURL and SubscribeURL (a regex); unset: AWS's SNS hosts. */
                certHostPattern: z
                  .string()
                  .refine(validRegExp, { message: 'must be a valid regular expression' })
                  .optional(),
              })
              .prefault({}),
            /** Else `SENDGRID_WEBHOOK_PUBLIC_KEY`; neither: the route answers 503. */
            sendgrid: z.strictObject({ publicKey: secret.optional() }).prefault({}),
            /** Else `MAILGUN_WEBHOOK_SIGNING_KEY` (the webhook signing key, not the API key); neither: 503. */
            mailgun: z.strictObject({ signingKey: secret.optional() }).prefault({}),
            /** Signed timestamps (SendGrid, Mailgun) further than this from now are refused as replays. */
            maxAgeSeconds: z.number().int().min(1).max(3600).default(300),
          })
          .prefault({}),
      })
      .prefault({}),
  })
  .superRefine((c, ctx) => {
    if (!(c.defaultProvider in c.providers)) {
      ctx.addIssue({ code: 'custom', path: ['defaultProvider'], message: `names no provider in providers` });
    } else if (c.pools[c.providers[c.defaultProvider]!.pool]?.state === 'warming') {
      ctx.addIssue({ code: 'custom', path: ['defaultProvider'], message: 'sends from a warming pool: route streams to it with an active pool beside it (routes)' });
    }
    for (const [id, p] of Object.entries(c.providers)) {
      if (!(p.pool in c.pools)) {
        ctx.addIssue({ code: 'custom', path: ['providers', id, 'pool'], message: `names no pool in pools` });
      }
      if (p.kind === 'ses' && (p.accessKeyId === undefined) !== (p.secretAccessKey === undefined)) {
        ctx.addIssue({ code: 'custom', path: ['providers', id, 'secretAccessKey'], message: 'accessKeyId and secretAccessKey go together' });
      }
    }
    for (const [stream, route] of Object.entries(c.routes)) {
      route.forEach((r, i) => {
        if (!(r.provider in c.providers)) {
          ctx.addIssue({ code: 'custom', path: ['routes', stream, i, 'provider'], message: 'names no provider in providers' });
        }
      });
      if (route.every((r) => r.weight === 0)) {
        ctx.addIssue({ code: 'custom', path: ['routes', stream], message: 'needs a provider with a weight above 0' });
      }
      const states = route.map((r) => c.pools[c.providers[r.provider]?.pool ?? '']?.state);
      if (states.includes('warming') && !states.includes('active')) {
        ctx.addIssue({ code: 'custom', path: ['routes', stream], message: 'routes to a warming pool, so needs a provider on an active pool to take what the warm-up caps leave' });
      }
    }
    const organisations = new Set([...c.organisations.patterns, ...(c.organisations.builtIn ? BUILT_IN_ORGANISATIONS : [])].map((o) => o.name));
    c.receivers.forEach((r, i) => {
      if (r.domains === undefined && r.organisation === undefined) {
        ctx.addIssue({ code: 'custom', path: ['receivers', i, 'domains'], message: 'needs domains or an organisation' });
      }
      if (r.organisation !== undefined && !organisations.has(r.organisation)) {
        ctx.addIssue({ code: 'custom', path: ['receivers', i, 'organisation'], message: 'names no organisation in organisations.patterns or the built-in table' });
      }
    });
    const reserved = c.reserves.critical + c.reserves.high;
    if (reserved >= 1) {
      ctx.addIssue({ code: 'custom', path: ['reserves'], message: 'reserves must add up to less than 1' });
    }
  });

/** A validated config with defaults applied. */
export type SluiceConfig = z.output<typeof configSchema>;
/** One provider's config. */
export type ProviderConfig = SluiceConfig['providers'][string];
/** One provider's config of a given kind. */
export type ProviderConfigOf<K extends ProviderConfig['kind']> = Extract<ProviderConfig, { kind: K }>;
/** One receiver policy. */
export type ReceiverPolicy = SluiceConfig['receivers'][number];

/**
 * Validates a config object (already read from YAML). Throws `SluiceError('invalid_config')`
 * naming the bad field's path.
 */
export function parseConfig(input: unknown, source = 'config'): SluiceConfig {
  return parseInput(configSchema, input ?? {}, { code: 'invalid_config', what: source });
}
