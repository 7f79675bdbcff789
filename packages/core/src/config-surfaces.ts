import { z } from 'zod';
import { name, secret, validRegExp } from './config-fields.js';

// What the processes show and serve: the admin app, metrics, logs and the HTTP API.

/**
 * The admin app (`apps/admin`): Bull Board, the ops dashboard and overrides. It refuses
 * to start without credentials (`tokens`, or `SLUICE_ADMIN_TOKENS`: `actor:token,…`),
 * unless `devNoAuth` is set and it listens on loopback.
 */
export const adminSchema = z
  .strictObject({
    host: z.string().min(1).default('127.0.0.1'),
    port: z.number().int().min(0).max(65535).default(8090),
    /** Bearer tokens (at least 32 characters), each naming the actor it stands for in the audit trail. */
    tokens: z
      .array(z.strictObject({ actor: name, token: z.string().min(32, { message: 'must be at least 32 characters' }) }))
      .default([]),
    /** Development only: no authentication, allowed only on a loopback host. */
    devNoAuth: z.boolean().default(false),
  })
  .prefault({});

/**
 * Prometheus `/metrics`. The api and admin apps serve it on their own port; a scheduler
 * or worker serves it on `port` (or `SLUICE_METRICS_PORT`) when one is given.
 */
export const metricsSchema = z
  .strictObject({
    host: z.string().min(1).default('127.0.0.1'),
    port: z.number().int().min(0).max(65535).optional(),
  })
  .prefault({});

/** Logs: credentials are always redacted; recipient addresses are hashed unless `recipients: plain`. */
export const loggingSchema = z
  .strictObject({
    recipients: z.enum(['hashed', 'plain']).default('hashed'),
  })
  .prefault({});

/** The HTTP API (`apps/api`): ESP webhooks. */
export const apiSchema = z
  .strictObject({
    host: z.string().min(1).default('127.0.0.1'),
    port: z.number().int().min(0).max(65535).default(8080),
    webhooks: z
      .strictObject({
        /** SES events through SNS. No topic configured: the route refuses everything. */
        ses: z
          .strictObject({
            /** The only SNS topics accepted. */
            topicArns: z
              .array(z.string().regex(/^arn:aws[a-z-]*:sns:/, { message: 'must be an SNS topic ARN' }))
              .default([]),
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
  .prefault({});
