import { z } from 'zod';
import { parseInput } from './parse.js';

const NAME = /^[A-Za-z0-9_-]{1,64}$/;
const name = z.string().regex(NAME, { message: 'must match [A-Za-z0-9_-]{1,64}' });
const rate = z.number().positive({ message: 'must be a positive number of messages per second' });
const burst = z.number().int().positive({ message: 'must be a positive integer' });

/** A rate limit: `rate` per second, up to `burst` at once from idle. */
const limitSchema = z.strictObject({ rate, burst: burst.optional() });

const perClass = <T extends z.ZodType>(value: T) =>
  z.strictObject({ critical: value, high: value, normal: value, low: value });

const providerSchema = z.strictObject({
  /** Which adapter sends for this provider. */
  kind: z.enum(['ses']),
  rate,
  burst: burst.optional(),
  /** Connection slots shared by every worker process. */
  concurrency: z.number().int().positive().default(16),
  /** IP pool this provider sends from (key into `pools`). */
  pool: name.default('default'),
  region: z.string().min(1).default('us-east-1'),
  /** API endpoint; unset means AWS, or the sandbox when no credentials are configured. */
  endpoint: z.url().optional(),
  accessKeyId: z.string().min(1).optional(),
  secretAccessKey: z.string().min(1).optional(),
  configurationSetName: z.string().min(1).optional(),
  /** Per-request timeout. */
  timeoutMs: z.number().int().positive().default(10_000),
});

const receiverSchema = z.strictObject({
  /** The receiving organisation's key: one bucket for all its domains. */
  name,
  /** Exact domains, or `*.example.com` for a domain and its subdomains. */
  domains: z.array(z.string().min(1).toLowerCase()).min(1),
  rate,
  burst: burst.optional(),
});

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
    pools: z.record(name, limitSchema.partial()).default({ default: {} }),
    receivers: z.array(receiverSchema).default([]),
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
        maxAttempts: z.number().int().min(1).max(100).default(8),
        backoffBaseMs: z.number().int().positive().default(1_000),
        backoffMaxMs: z.number().int().positive().default(600_000),
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
    sandbox: z.strictObject({ url: z.url().default('http://127.0.0.1:4566') }).prefault({}),
  })
  .superRefine((c, ctx) => {
    if (!(c.defaultProvider in c.providers)) {
      ctx.addIssue({ code: 'custom', path: ['defaultProvider'], message: `names no provider in providers` });
    }
    for (const [id, p] of Object.entries(c.providers)) {
      if (!(p.pool in c.pools)) {
        ctx.addIssue({ code: 'custom', path: ['providers', id, 'pool'], message: `names no pool in pools` });
      }
      if ((p.accessKeyId === undefined) !== (p.secretAccessKey === undefined)) {
        ctx.addIssue({ code: 'custom', path: ['providers', id, 'secretAccessKey'], message: 'accessKeyId and secretAccessKey go together' });
      }
    }
    const reserved = c.reserves.critical + c.reserves.high;
    if (reserved >= 1) {
      ctx.addIssue({ code: 'custom', path: ['reserves'], message: 'reserves must add up to less than 1' });
    }
  });

/** A validated config with defaults applied. */
export type SluiceConfig = z.output<typeof configSchema>;
/** One provider's config. */
export type ProviderConfig = SluiceConfig['providers'][string];
/** One receiver policy. */
export type ReceiverPolicy = SluiceConfig['receivers'][number];

/**
 * Validates a config object (already read from YAML). Throws `SluiceError('invalid_config')`
 * naming the bad field's path.
 */
export function parseConfig(input: unknown, source = 'config'): SluiceConfig {
  return parseInput(configSchema, input ?? {}, { code: 'invalid_config', what: source });
}
