import type { VerifyFailure, VerifyFailureCode } from '../verify-result.js';

/** A failure result. */
export function fail(code: VerifyFailureCode, message: string): VerifyFailure {
  return { ok: false, code, message };
}

/** Seconds between `timestampSeconds` and now, checked against a window either way. */
export function fresh(timestampSeconds: number, nowMs: number, maxAgeSeconds: number): boolean {
  return Number.isFinite(timestampSeconds) && Math.abs(nowMs / 1000 - timestampSeconds) <= maxAgeSeconds;
}
