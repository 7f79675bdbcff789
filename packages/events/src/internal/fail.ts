import type { VerifyFailure, VerifyFailureCode } from '../verify-result.js';

/** A failure result. */
export function fail(code: VerifyFailureCode, message: string): VerifyFailure {
  return { ok: false, code, message };
}

/** A `malformed` failure about one field: the message starts with the field's path. */
export function badField(field: string, problem: string): VerifyFailure {
  return { ok: false, code: 'malformed', message: `${field}: ${problem}`, field };
}

/** Seconds between `timestampSeconds` and now, checked against a window either way. */
export function fresh(timestampSeconds: number, nowMs: number, maxAgeSeconds: number): boolean {
  return Number.isFinite(timestampSeconds) && Math.abs(nowMs / 1000 - timestampSeconds) <= maxAgeSeconds;
}
