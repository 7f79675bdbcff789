import { z } from 'zod';
import { cidr, host, name, secret, validRegExp } from './config-fields.js';

// What the processes show and serve: the admin app, metrics, logs and the HTTP API.

/** The least an admin token must carry, estimated from its own characters. */
export const MIN_TOKEN_BITS = 128;

/** The shortest period with which `s` repeats itself (its length when it does not). */
function period(s: readonly string[]): number {
  for (let p = 1; p <= s.length / 2; p++) {
    if (s.every((ch, i) => i < p || ch === s[i - p])) return p;
  }
  return s.length;
}

/**
 * Why an admin token is too weak to guard the admin app, or undefined when it is not. A
 * token is a password nobody has to remember, so the rule is strict: at least 32
 * characters, no spaces or control characters, at least 16 distinct characters, at least
 * {@link MIN_TOKEN_BITS} bits by its characters' frequencies (length × Shannon entropy per
 * character), not a shorter token repeated, and not mostly runs (`abcd…`, `aaaa…`: neighbours
 * one code point or less apart). `openssl rand -base64 32` passes; 32 identical characters,
 * or `openssl rand -hex 16` (128 random bits, but 32 characters of 16 kinds: about 115 bits
 * by this estimate, which cannot tell it from a pattern) do not. The reason never quotes the token.
 */
export function tokenWeakness(token: string): string | undefined {
  const chars = [...token];
  const n = chars.length;
  if (n < 32) return 'must be at least 32 characters';
  if (/[\s\u0000-\u001F\u007F-\u009F]/.test(token)) return 'must not contain spaces or control characters';
  const counts = new Map<string, number>();
  for (const ch of chars) counts.set(ch, (counts.get(ch) ?? 0) + 1);
  const hint = 'generate one with `openssl rand -base64 32`';
  if (counts.size < 16) return `has ${counts.size} distinct characters, needs at least 16: ${hint}`;
  let perChar = 0;
  for (const c of counts.values()) perChar -= (c / n) * Math.log2(c / n);
  const bits = Math.floor(perChar * n);
  if (bits < MIN_TOKEN_BITS) return `carries about ${bits} bits by its characters, needs ${MIN_TOKEN_BITS}: ${hint}`;
  if (period(chars) < n) return `repeats a shorter token: ${hint}`;
  let steps = 0;
  for (let i = 1; i < n; i++) if (Math.abs(chars[i]!.codePointAt(0)! - chars[i - 1]!.codePointAt(0)!) <= 1) steps++;
  if (steps * 2 > n - 1) return `is mostly runs or repeats of neighbouring characters: ${hint}`;
  return undefined;
}

/** An admin token: see {@link tokenWeakness}. */
const adminToken = z.string().superRefine((token, ctx) => {
  const weakness = tokenWeakness(token);
  if (weakness !== undefined) ctx.addIssue({ code: 'custom', message: weakness });
});

/**
 * The admin app (`apps/admin`): Bull Board, the ops dashboard and overrides. It refuses
 * to start without credentials (`tokens`, or `SLUICE_ADMIN_TOKENS`: `actor:token,…`),
 * unless `devNoAuth` is set and it listens on loopback.
 */
export const adminSchema = z
  .strictObject({
    /** The interface the admin app listens on. */
    host: host.default('127.0.0.1'),
    /** Its port (0: any free one). */
    port: z.number().int().min(0).max(65535).default(8090),
    /** Bearer tokens ({@link tokenWeakness}: 32+ characters, 128 bits), each naming the actor it stands for in the audit trail. */
    tokens: z
      .array(
        z.strictObject({
          /** Who the token stands for in the audit trail. */
          actor: name,
          token: adminToken,
        }),
      )
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
    /** The interface `/metrics` listens on. */
    host: host.default('127.0.0.1'),
    /** A scheduler's or worker's `/metrics` port (`SLUICE_METRICS_PORT`); unset: none. */
    port: z.number().int().min(0).max(65535).optional(),
  })
  .prefault({});

/**
 * Every process's `/healthz` (live) and `/readyz` (started, Redis answering, not draining), on a
 * port of their own when one is given (docs/operations/running-a-fleet.md, "Health").
 */
export const healthSchema = z
  .strictObject({
    /** The interface the health endpoints listen on. */
    host: host.default('127.0.0.1'),
    /** Their port (`SLUICE_HEALTH_PORT`; 0: any free one); unset: none. */
    port: z.number().int().min(0).max(65535).optional(),
  })
  .prefault({});

/** pino's levels, most severe first; `silent` logs nothing. */
export const logLevel = z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']);

/**
 * Logs: credentials are always redacted; recipient addresses are hashed unless `recipients:
 * plain`; lines below `level` are not written (`LOG_LEVEL` overrides it).
 */
export const loggingSchema = z
  .strictObject({
    /** Recipient addresses in log lines: `hashed` (a stable hash) or `plain`. */
    recipients: z.enum(['hashed', 'plain']).default('hashed'),
    /** @defaultValue `info` */
    /** The least severe level written (`LOG_LEVEL` overrides it). */
    level: logLevel.default('info'),
  })
  .prefault({});

/** The HTTP API (`apps/api`): ESP webhooks. */
export const apiSchema = z
  .strictObject({
    /** The interface the api app listens on. */
    host: host.default('127.0.0.1'),
    /** Its port (0: any free one). */
    port: z.number().int().min(0).max(65535).default(8080),
    /**
     * Which proxies' `X-Forwarded-For` to believe for a request's address (the source recorded on
     * its messages, and what a key's CIDRs are checked against): `false`, the socket's address;
     * the addresses or CIDR blocks of your load balancers; or how many hops of proxies there are.
     * `true` (believe anyone) is refused: any client could then claim any address.
     * @defaultValue `false`
     */
    trustProxy: z
      .union([z.literal(false), z.array(cidr).min(1), z.number().int().min(1).max(10)], {
        message: 'must be false, a list of proxy addresses or CIDR blocks, or a number of hops (1-10)',
      })
      .default(false),
    /** API keys of tenants (docs/design/tenants-and-keys.md). */
    keys: z
      .strictObject({
        /**
         * The secret every key's stored hash is keyed with (HMAC-SHA256), never written to Redis;
         * else `SLUICE_API_KEY_PEPPER`. The same on every api process and wherever keys are made
         * (the CLI). Neither: no key can be made, and every `/v1` route answers 503
         * `keys_unconfigured`. Changing it invalidates every key. As strong as an admin token.
         */
        pepper: adminToken.optional(),
      })
      .prefault({}),
    /** The ESPs' event webhooks: what each route accepts. */
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
        sendgrid: z
          .strictObject({
            /** The Event Webhook's verification key (base64 ECDSA public key). */
            publicKey: secret.optional(),
          })
          .prefault({}),
        /** Else `MAILGUN_WEBHOOK_SIGNING_KEY` (the webhook signing key, not the API key); neither: 503. */
        mailgun: z
          .strictObject({
            /** The HTTP webhook signing key. */
            signingKey: secret.optional(),
          })
          .prefault({}),
        /** Signed timestamps (SendGrid, Mailgun) further than this from now are refused as replays. */
        maxAgeSeconds: z.number().int().min(1).max(3600).default(300),
      })
      .prefault({}),
  })
  .prefault({});
