import { isIP } from 'node:net';
import { z } from 'zod';
import { RESERVED_KEYS } from './config-input.js';

// The fields every part of the config is made of.

const NAME = /^[A-Za-z0-9_-]{1,64}$/;
/**
 * A name (provider, pool, receiver, stream, actor…): `[A-Za-z0-9_-]{1,64}`, and not
 * `__proto__`, `constructor` or `prototype`: names become object keys, where those three
 * are dropped or read as present on every object.
 */
export const name = z
  .string()
  .regex(NAME, { message: 'must match [A-Za-z0-9_-]{1,64}' })
  .refine((n) => !RESERVED_KEYS.has(n), { message: 'is a reserved word (__proto__, constructor, prototype)' });

// No space, tab, line break or control character anywhere: `new URL` silently strips tabs
// and line breaks, and a NUL would reach the socket as it is.
const NO_SPACE = /^[^\s\u0000-\u001F\u007F-\u009F]+$/;
const noSpace = { message: 'must not contain spaces or control characters' };

/** An absolute URL, checked as written (before `new URL` would tidy it). */
export const url = z.string().regex(NO_SPACE, noSpace).pipe(z.url());

/** A host name or address (to listen on or to connect to). */
export const host = z.string().min(1).regex(NO_SPACE, noSpace);

/** Whether `value` is what ioredis connects to: a `redis://` or `rediss://` URL, or a socket path. */
function redisTarget(value: string): boolean {
  if (value.startsWith('/')) return true;
  try {
    return ['redis:', 'rediss:'].includes(new URL(value).protocol);
  } catch {
    return false;
  }
}

/** Where Redis is: `redis://[user:password@]host:port[/db]`, `rediss://…` (TLS), or a socket path. */
export const redisUrl = z
  .string()
  .min(1)
  .regex(NO_SPACE, noSpace)
  .refine(redisTarget, { message: 'must be a redis:// or rediss:// URL, or a socket path' });
/** Messages per second. */
export const rate = z.number().positive({ message: 'must be a positive number of messages per second' });
/** Messages at once from idle. */
export const burst = z.number().int().positive({ message: 'must be a positive integer' });

/** A rate limit: `rate` per second, up to `burst` at once from idle. */
export const limitSchema = z.strictObject({ rate, burst: burst.optional() });

/** One value per priority class. */
export const perClass = <T extends z.ZodType>(value: T) =>
  z.strictObject({ critical: value, high: value, normal: value, low: value });

/** A credential: never empty. */
export const secret = z.string().min(1);

/** Whether `pattern` compiles as a regular expression. */
export function validRegExp(pattern: string): boolean {
  try {
    new RegExp(pattern);
    return true;
  } catch {
    return false;
  }
}

/** An IP address or a CIDR block (`10.0.0.0/8`, `2001:db8::/32`): a key's sources, the api's trusted proxies. */
export const cidr = z.string().refine(
  (c) => {
    const [address, bits, ...rest] = c.split('/');
    const family = isIP(address ?? '');
    const max = family === 4 ? 32 : 128;
    return family !== 0 && rest.length === 0 && (bits === undefined || (/^\d{1,3}$/.test(bits) && Number(bits) <= max));
  },
  { message: 'must be an IP address or a CIDR block (10.0.0.0/8, 2001:db8::/32)' },
);
