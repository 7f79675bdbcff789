import { SluiceError, type ProviderConfig, type ProviderConfigOf, type SluiceConfig } from '@sluice/core';

/** What every adapter factory takes. */
export interface ProviderOptions<K extends ProviderConfig['kind']> {
  /** The provider's id in config (`providers.<id>`). */
  id: string;
  /** Its config: credentials, endpoint, timeout, pool size. */
  config: ProviderConfigOf<K>;
  /** Where mail goes when the provider says `sandbox: true` (`sandbox` in config). */
  sandbox: SluiceConfig['sandbox'];
}

/**
 * A real provider's API key, or a refusal to start naming the provider: without a key it
 * would send nowhere (never to the sandbox unless it says `sandbox: true`).
 */
export function requireKey(id: string, kind: string, key: string | undefined, env: string): string {
  if (key !== undefined) return key;
  throw new SluiceError(
    'invalid_config',
    `providers.${id}.apiKey: a real ${kind} provider needs an API key (apiKey or ${env}); sandbox: true sends to the local sandbox instead`,
    { path: `providers.${id}.apiKey` },
  );
}

/** `promise`, or a rejection once `ms` have passed. */
export async function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
