import type { ProviderConfig, ProviderConfigOf, SluiceConfig } from '@sluice/core';

/** What every adapter factory takes. */
export interface ProviderOptions<K extends ProviderConfig['kind']> {
  /** The provider's id in config (`providers.<id>`). */
  id: string;
  /** Its config: credentials, endpoint, timeout, pool size. */
  config: ProviderConfigOf<K>;
  /** Where mail goes when no credentials are configured (`sandbox` in config). */
  sandbox: SluiceConfig['sandbox'];
}
