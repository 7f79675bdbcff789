import { createRequire } from 'node:module';

const requireHere = createRequire(import.meta.url);

/**
 * A CommonJS dependency loaded at its first use, not when `@sluice/core` is imported. The
 * template engine, the YAML parser and the logger are ~9 MB of RSS each and live heap that
 * V8's first old-generation limit multiplies (about four times the live heap at start): a
 * backend that only injects (`@sluice/client`) never loads them (docs/design/campaigns.md,
 * the producer's memory).
 */
export function lazy<T>(id: string): () => T {
  let loaded: T | undefined;
  return () => (loaded ??= requireHere(id) as T);
}
