import type { SluiceConfig } from '@sluice/core';
import { createMailgunProvider } from './mailgun.js';
import type { Provider } from './provider.js';
import { createSendgridProvider } from './sendgrid.js';
import { createSesProvider } from './ses.js';
import { createSmtpProvider } from './smtp.js';

/** One adapter per configured provider, by id, built by its `kind`. Close each when done. */
export function createProviders(config: SluiceConfig): Map<string, Provider> {
  const providers = new Map<string, Provider>();
  const { sandbox } = config;
  for (const [id, p] of Object.entries(config.providers)) {
    switch (p.kind) {
      case 'ses':
        providers.set(id, createSesProvider({ id, config: p, sandbox }));
        break;
      case 'sendgrid':
        providers.set(id, createSendgridProvider({ id, config: p, sandbox }));
        break;
      case 'mailgun':
        providers.set(id, createMailgunProvider({ id, config: p, sandbox }));
        break;
      case 'smtp':
        providers.set(id, createSmtpProvider({ id, config: p, sandbox }));
        break;
    }
  }
  return providers;
}
