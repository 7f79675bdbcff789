import { z } from 'zod';
import { name } from './config-fields.js';

/** The fixed windows a plan caps, in UTC: the calendar minute, hour, day and month. */
export const CAP_WINDOWS = ['minute', 'hour', 'day', 'month'] as const;
/** One of {@link CAP_WINDOWS}. */
export type CapWindow = (typeof CAP_WINDOWS)[number];

/** At most this many messages in each UTC window named (none: no cap on that window). */
export const capsSchema = z.strictObject({
  /** At most this many in a UTC minute (hh:mm:00 to the next). */
  minute: z.number().int().positive().optional(),
  /** At most this many in a UTC hour. */
  hour: z.number().int().positive().optional(),
  /** At most this many in a UTC day (00:00 to 24:00 UTC). */
  day: z.number().int().positive().optional(),
  /** At most this many in a calendar month, UTC (the 1st 00:00 to the next 1st). */
  month: z.number().int().positive().optional(),
});
/** A plan's caps (docs/design/tenants-and-keys.md). */
export type CapLimits = z.infer<typeof capsSchema>;

/** One plan: the caps of a tenant on it, of each of its keys, and what happens at a cap. */
export const planSchema = z.strictObject({
  /** The tenant's own caps: every message of the tenant counts. */
  caps: capsSchema.default({}),
  /** Each API key's caps: the messages sent with that key count (a key is a dimension of its own). */
  keyCaps: capsSchema.default({}),
  /**
   * At a cap: `hold` keeps the message and admission releases it when the window allows;
   * `refuse` also answers new mail over HTTP 429 `cap_reached` with the window's end while a cap
   * is reached (admission holds any that got in at the same moment). @defaultValue `'hold'`
   */
  atCap: z.enum(['hold', 'refuse']).default('hold'),
});
/** A plan as parsed. */
export type Plan = z.infer<typeof planSchema>;

/**
 * The plans tenants may be on, by name (`sluice tenants plan <tenant> <plan>`). A tenant on no
 * plan, or on one not here, has no caps. @defaultValue none
 */
export const plansSchema = z.record(name, planSchema).default({});
