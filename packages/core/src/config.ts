import { z } from 'zod';
import { limitSchema, name, perClass } from './config-fields.js';
import { redisSchema } from './config-redis.js';
import { checkConfigInput } from './config-input.js';
import {
  deliverySchema,
  outcomesSchema,
  backpressureSchema,
  suppressionSchema,
  schedulerSchema,
  batchesSchema,
  injectionSchema,
  workerSchema,
} from './config-delivery.js';
import { failoverSchema, poolSchema, providerSchema, routesSchema, sandboxSchema } from './config-providers.js';
import { organisationsSchema, receiverSchema } from './config-receivers.js';
import { adminSchema, apiSchema, healthSchema, loggingSchema, metricsSchema } from './config-surfaces.js';
import { governorSchema } from './governor-config.js';
import { launchSchema } from './config-launch.js';
import { campaignsSchema } from './config-campaigns.js';
import { plansSchema } from './config-plans.js';
import { BUILT_IN_ORGANISATIONS } from './organisations.js';
import { parseInput } from './parse.js';

// The config file's schema, part by part: config-providers.ts (where mail goes out),
// config-receivers.ts (where it goes to), config-delivery.ts (how it is delivered),
// config-surfaces.ts (what the processes serve); the checks across parts are here.

/** The config file's schema (YAML). Every field has a default, so `{}` is a valid config. */
export const configSchema = z
  .strictObject({
    /** Where the fleet's Redis is, and the prefix of every key and queue. */
    redis: redisSchema,
    /**
     * `production` refuses a sandbox provider (one whose mail never leaves) unless
     * `allowSandbox` names it. @defaultValue `'development'`
     */
    environment: z.enum(['development', 'production']).default('development'),
    /** With `environment: production`: the sandbox providers allowed anyway, by name. @defaultValue `[]` */
    allowSandbox: z.array(name).default([]),
    /** The provider of a stream without a route (a key of `providers`). */
    defaultProvider: name.default('ses'),
    /**
     * The ESP accounts and SMTP relays mail goes out through, by name. The built-in default (no
     * config file) is one SES provider on the local sandbox, and it says so.
     */
    providers: z
      .record(name, providerSchema)
      .default({ ses: providerSchema.parse({ kind: 'ses', rate: 50, burst: 10, concurrency: 16, sandbox: true }) }),
    /** IP pools (docs/design/feedback-loop.md): a rate of their own, a state, a warm-up schedule. */
    pools: z.record(name, poolSchema).default({ default: { state: 'active' } }),
    /** Receiver policies: a receiving organisation's rate, burst and connections, by domain or MX. */
    receivers: z.array(receiverSchema).default([]),
    organisations: organisationsSchema,
    /** The share of every quota kept for a class that lower classes can never take. */
    reserves: z
      .strictObject({
        /** Share of every layer's rate kept for critical mail (OTP, password reset). */
        critical: z.number().min(0).max(0.9).default(0.2),
        /** Share of every layer's rate kept for high mail (and critical). */
        high: z.number().min(0).max(0.9).default(0),
        /**
         * Lower classes may use a reserve's idle part, one slot at a time, when its own classes
         * could still go within this many ms after it (docs/design/admission-and-limiter.md); `null`:
         * never lent. @defaultValue `250`
         */
        lendAheadMs: z.number().int().min(0).max(1_000).nullable().default(250),
        /**
         * While the limiter Redis does not answer (and the queues' does), each scheduler and
         * worker may still admit and send critical mail at this fraction of every layer's
         * critical reserve, on buckets of its own; every other class waits (fail closed). Set
         * it at most 1 / (the larger of your scheduler and worker counts) and the fleet stays
         * within the reserve (docs/design/state-and-owners.md, "The limiter Redis away").
         * `0`: off, nothing goes. @defaultValue `0`
         */
        localShare: z.number().min(0).max(1).default(0),
        /** A critical decision the limiter Redis leaves unanswered this long counts it away. @defaultValue `1000` */
        localAfterMs: z.number().int().min(50).max(60_000).default(1_000),
      })
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
    /** Limits of the keys config does not list: any other receiver, every campaign, every tenant. */
    defaults: z
      .strictObject({
        /** A receiver no `receivers` entry names: its own bucket at this limit (none: unlimited). */
        receiver: limitSchema.partial().default({}),
        /** Every campaign's own limit. */
        campaign: limitSchema.partial().default({ rate: 1000 }),
        /** Every tenant's own limit (none: unlimited). */
        tenant: limitSchema.partial().default({}),
      })
      .prefault({}),
    delivery: deliverySchema,
    outcomes: outcomesSchema,
    backpressure: backpressureSchema,
    routes: routesSchema,
    /** Rules over the signals that lower, restore and pause keys (docs/design/feedback-loop.md). */
    governor: governorSchema.prefault({}),
    failover: failoverSchema,
    scheduler: schedulerSchema,
    batches: batchesSchema,
    injection: injectionSchema,
    worker: workerSchema,
    sandbox: sandboxSchema,
    suppression: suppressionSchema,
    admin: adminSchema,
    metrics: metricsSchema,
    health: healthSchema,
    logging: loggingSchema,
    api: apiSchema,
    /** The admission decision at a campaign's launch (docs/design/campaigns.md). */
    launch: launchSchema,
    /** When a finished campaign is archived, and how long its record stays (docs/design/campaigns.md). */
    campaigns: campaignsSchema,
    /** Tenants' plans: hard caps per minute, hour, day and month (docs/design/tenants-and-keys.md). */
    plans: plansSchema,
  })
  .superRefine((c, ctx) => {
    if (!Object.hasOwn(c.providers, c.defaultProvider)) {
      ctx.addIssue({ code: 'custom', path: ['defaultProvider'], message: `names no provider in providers` });
    } else if (c.pools[c.providers[c.defaultProvider]!.pool]?.state === 'warming') {
      ctx.addIssue({
        code: 'custom',
        path: ['defaultProvider'],
        message: 'sends from a warming pool: route streams to it with an active pool beside it (routes)',
      });
    }
    for (const [id, p] of Object.entries(c.providers)) {
      if (!Object.hasOwn(c.pools, p.pool)) {
        ctx.addIssue({ code: 'custom', path: ['providers', id, 'pool'], message: `names no pool in pools` });
      }
      if (p.kind === 'ses' && (p.accessKeyId === undefined) !== (p.secretAccessKey === undefined)) {
        ctx.addIssue({
          code: 'custom',
          path: ['providers', id, 'secretAccessKey'],
          message: 'accessKeyId and secretAccessKey go together',
        });
      }
      if (p.kind === 'ses' && p.sessionToken !== undefined && p.accessKeyId === undefined) {
        ctx.addIssue({
          code: 'custom',
          path: ['providers', id, 'sessionToken'],
          message: 'goes with accessKeyId and secretAccessKey',
        });
      }
      if (p.kind === 'smtp' && !p.sandbox && p.host === undefined) {
        ctx.addIssue({
          code: 'custom',
          path: ['providers', id, 'host'],
          message: 'a real SMTP provider needs a host (sandbox: true sends to the local sandbox instead)',
        });
      }
      sandboxIssues(c, id, p, ctx);
    }
    c.allowSandbox.forEach((id, i) => {
      if (!Object.hasOwn(c.providers, id)) {
        ctx.addIssue({ code: 'custom', path: ['allowSandbox', i], message: 'names no provider in providers' });
      }
    });
    for (const [stream, route] of Object.entries(c.routes)) {
      route.forEach((r, i) => {
        if (!Object.hasOwn(c.providers, r.provider)) {
          ctx.addIssue({
            code: 'custom',
            path: ['routes', stream, i, 'provider'],
            message: 'names no provider in providers',
          });
        }
      });
      if (route.every((r) => r.weight === 0)) {
        ctx.addIssue({ code: 'custom', path: ['routes', stream], message: 'needs a provider with a weight above 0' });
      }
      const states = route.map((r) => c.pools[c.providers[r.provider]?.pool ?? '']?.state);
      if (states.includes('warming') && !states.includes('active')) {
        ctx.addIssue({
          code: 'custom',
          path: ['routes', stream],
          message:
            'routes to a warming pool, so needs a provider on an active pool to take what the warm-up caps leave',
        });
      }
    }
    const organisations = new Set(
      [...c.organisations.patterns, ...(c.organisations.builtIn ? BUILT_IN_ORGANISATIONS : [])].map((o) => o.name),
    );
    c.receivers.forEach((r, i) => {
      if (r.domains === undefined && r.organisation === undefined) {
        ctx.addIssue({
          code: 'custom',
          path: ['receivers', i, 'domains'],
          message: 'needs domains or an organisation',
        });
      }
      if (r.organisation !== undefined && !organisations.has(r.organisation)) {
        ctx.addIssue({
          code: 'custom',
          path: ['receivers', i, 'organisation'],
          message: 'names no organisation in organisations.patterns or the built-in table',
        });
      }
    });
    if (c.launch.storage.holdAbove > c.launch.storage.rejectAbove) {
      ctx.addIssue({
        code: 'custom',
        path: ['launch', 'storage', 'holdAbove'],
        message: 'must not be above rejectAbove',
      });
    }
    const reserved = c.reserves.critical + c.reserves.high;
    if (reserved >= 1) {
      ctx.addIssue({ code: 'custom', path: ['reserves'], message: 'reserves must add up to less than 1' });
    }
  });

/** Where a provider with `sandbox: true` goes, it cannot also have an address or keys of its own. */
const REAL_ONLY = ['endpoint', 'host', 'accessKeyId', 'secretAccessKey', 'sessionToken', 'apiKey', 'user', 'password'];

/** A sandbox provider: nothing of a real one, and in production only when allowed by name. */
function sandboxIssues(
  c: { environment: string; allowSandbox: string[] },
  id: string,
  p: Record<string, unknown>,
  ctx: z.RefinementCtx,
): void {
  if (p.sandbox !== true) return;
  for (const field of REAL_ONLY) {
    if (p[field] === undefined) continue;
    ctx.addIssue({
      code: 'custom',
      path: ['providers', id, field],
      message: `a sandbox provider sends to the local sandbox (sandbox.*): drop ${field}, or drop sandbox: true to send for real`,
    });
  }
  if (c.environment === 'production' && !c.allowSandbox.includes(id)) {
    ctx.addIssue({
      code: 'custom',
      path: ['providers', id, 'sandbox'],
      message: 'a sandbox provider in production: its mail never leaves; name it in allowSandbox to allow it',
    });
  }
}

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
 * naming the bad field's path; the document's own shape (nesting, reserved keys, control
 * characters) is checked first (`checkConfigInput`).
 */
export function parseConfig(input: unknown, source = 'config'): SluiceConfig {
  checkConfigInput(input, source);
  return parseInput(configSchema, input ?? {}, { code: 'invalid_config', what: source });
}
