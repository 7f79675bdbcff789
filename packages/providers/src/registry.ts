import type { SluiceConfig } from '@sluice/core';
import type { Provider } from './provider.js';
import { createSesProvider } from './ses.js';

/** One adapter per configured provider, by id. */
export function createProviders(config: SluiceConfig): Map<string, Provider> {
  const providers = new Map<string, Provider>();
  for (const [id, p] of Object.entries(config.providers)) {
    switch (p.kind) {
      case 'ses':
        providers.set(id, createSesProvider({ id, config: p, sandboxUrl: config.sandbox.url }));
        break;
    }
  }
  return providers;
}
