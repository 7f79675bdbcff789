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
