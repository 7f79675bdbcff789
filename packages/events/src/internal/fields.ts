import type { VerifyResult } from '../verify-result.js';
import { badField } from './fail.js';

// The ids come back from an ESP; they become Redis key parts, so only the shape our
// own ids have is taken (message ids, tenant and campaign names share it).
const ID = /^[A-Za-z0-9_-]{1,64}$/;
const ADDRESS = /^[^\s@]{1,256}@[^\s@]{1,256}$/;

/** An id echoed back by an ESP, or undefined when it is missing or not one of ours. */
export function cleanId(value: unknown): string | undefined {
  const v = Array.isArray(value) ? (value as unknown[])[0] : value;
  return typeof v === 'string' && ID.test(v) ? v : undefined;
}

/** A recipient address, lower-cased, or undefined if it is not one. */
export function cleanAddress(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  // SES and Mailgun may give `Name <addr>`; keep only the address.
  const m = /<([^<>]+)>\s*$/.exec(value);
  const address = (m ? m[1]! : value).trim().toLowerCase();
  return ADDRESS.test(address) ? address : undefined;
}

/** An RFC 3463 code found in a status field or a reply text. */
export function enhancedCode(...texts: unknown[]): string | undefined {
  for (const t of texts) {
    if (typeof t !== 'string') continue;
    const m = /\b([245]\.\d{1,3}\.\d{1,3})\b/.exec(t);
    if (m) return m[1];
  }
  return undefined;
}

/** Milliseconds from an ISO date or unix seconds (int or float); NaN if neither. */
export function epochMs(value: unknown): number {
  if (typeof value === 'number') return Math.round(value * 1000);
  if (typeof value === 'string') {
    if (/^\d+(\.\d+)?$/.test(value)) return Math.round(Number(value) * 1000);
    return Date.parse(value);
  }
  return Number.NaN;
}

/** True for a plain JSON object. */
export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Diagnostic text cut to what is worth keeping. */
export function text(value: unknown, max = 500): string {
  return typeof value === 'string' ? value.slice(0, max) : '';
}

/**
 * Which event times are taken. An event is applied once, remembered by its id for the
 * feedback's dedupe memory: one older than that memory could be a replay the memory no
 * longer knows, and one from the future is a clock or a forgery.
 */
export interface EventWindow {
  /** The clock, epoch ms. @defaultValue `Date.now()` */
  now?: number | undefined;
  /** How old an event may be: the dedupe memory. @defaultValue 2 days */
  maxAgeSeconds?: number | undefined;
  /** How far ahead of our clock an event may be (the ESP's clock skew). @defaultValue 300 */
  maxFutureSeconds?: number | undefined;
}

/** Event times are refused before the year 2000 and after 9999, whatever the window. */
const PLAUSIBLE = { from: Date.UTC(2000, 0, 1), to: Date.UTC(9999, 11, 31) };

/** An event's time, epoch ms, if it is one and inside the window; else why not, naming `field`. */
export function eventTime(value: unknown, field: string, window: EventWindow = {}): VerifyResult<number> {
  const at = epochMs(value);
  if (!Number.isFinite(at) || at < PLAUSIBLE.from || at > PLAUSIBLE.to) {
    return badField(field, "must be the event's time, unix seconds or ISO 8601");
  }
  const now = window.now ?? Date.now();
  const maxAge = window.maxAgeSeconds ?? 2 * 86_400;
  const ahead = window.maxFutureSeconds ?? 300;
  if (at < now - maxAge * 1000 || at > now + ahead * 1000) {
    return badField(field, `must be within the last ${maxAge} s (and at most ${ahead} s ahead)`);
  }
  return { ok: true, value: at };
}
