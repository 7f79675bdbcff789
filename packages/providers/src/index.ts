export { messageIdHeader, type Outcome, type Provider, type SendContext } from './provider.js';
export { createSesProvider, classifySesError, type SesProviderOptions } from './ses.js';
export { createProviders } from './registry.js';
