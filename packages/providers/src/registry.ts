import type { SluiceConfig } from '@sluice/core';
import { createMailgunProvider } from './mailgun.js';
import type { Provider } from './provider.js';
import { createSendgridProvider } from './sendgrid.js';
import { createSesProvider } from './ses.js';
import { MAILGUN_BATCH_MAX_ENTRIES } from './mailgun-batch.js';
import { SENDGRID_BATCH_MAX_ENTRIES } from './sendgrid-batch.js';
import { SES_BULK_MAX_ENTRIES } from './ses-bulk.js';
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

/**
 * The most recipients one call of a provider carries (its adapter's `batch.maxEntries`), for
 * the scheduler, which makes batches without the adapters; undefined: it sends one at a time.
 */
export function batchLimitOf(provider: SluiceConfig['providers'][string]): number | undefined {
  switch (provider.kind) {
    case 'ses':
      return SES_BULK_MAX_ENTRIES;
    case 'sendgrid':
      return SENDGRID_BATCH_MAX_ENTRIES;
    case 'mailgun':
      return MAILGUN_BATCH_MAX_ENTRIES;
    case 'smtp':
      return provider.recipientsPerTransaction > 1 ? provider.recipientsPerTransaction : undefined;
  }
}
