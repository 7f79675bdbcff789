import { z } from 'zod';

// The fields every part of the config is made of.

const NAME = /^[A-Za-z0-9_-]{1,64}$/;
/** A name (provider, pool, receiver, stream, actor…): `[A-Za-z0-9_-]{1,64}`. */
export const name = z.string().regex(NAME, { message: 'must match [A-Za-z0-9_-]{1,64}' });
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
