import { CAP_WINDOWS, SluiceError, type CapLimits, type CapWindow } from '@sluice/core';

/** A plan-cap counter (`keys.capCount`) and its limits. */
export interface CapCounter {
  key: string;
  limits: CapLimits;
}

/** The cap that denied a message: whose, and which window. */
export interface CapReached {
  of: 'tenant' | 'key';
  window: CapWindow;
}

/** One counter's limits as admit-n.lua takes them (minute, hour, day, month; 0: none). */
function limitsOf(counter: CapCounter | undefined): number[] {
  const limits = CAP_WINDOWS.map((w) => counter?.limits[w] ?? 0);
  if (limits.some((n) => !Number.isSafeInteger(n) || n < 0)) {
    throw new SluiceError('invalid_argument', `caps: each must be a whole number ≥ 0, got ${limits.join(', ')}`, {
      path: 'caps',
    });
  }
  return limits;
}

/** A request's eight cap numbers (the tenant's four, then the key's), or undefined when none is set. */
export function capLimits(tenant: CapCounter | undefined, key: CapCounter | undefined): number[] | undefined {
  const limits = [...limitsOf(tenant), ...limitsOf(key)];
  return limits.some((n) => n > 0) ? limits : undefined;
}

/** The cap admit-n.lua names in a denial (1-4 the tenant's minute…month, 5-8 the key's), if any. */
export function capReached(code: number | undefined): CapReached | undefined {
  if (code === undefined || code < 1 || code > 8) return undefined;
  return { of: code > 4 ? 'key' : 'tenant', window: CAP_WINDOWS[(code - 1) % 4]! };
}
