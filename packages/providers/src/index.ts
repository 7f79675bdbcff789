export {
  messageIdHeader,
  outcomeFrom,
  type CheckResult,
  type Outcome,
  type Provider,
  type SendContext,
  type BatchContext,
  type BatchEntry,
  type BatchSupport,
} from './provider.js';
export {
  classifyReply,
  CLASSIFIER_VERSION,
  FAMILIES,
  type Classification,
  type Family,
  type Reply,
  type ReplyScope,
  type ThrottleScope,
} from './classify.js';
export type { ProviderOptions } from './internal/options.js';
export { createSesProvider, type SesProviderOptions } from './ses.js';
export { createSendgridProvider, type SendgridProviderOptions } from './sendgrid.js';
export { createMailgunProvider, type MailgunProviderOptions } from './mailgun.js';
export { createSmtpProvider, type SmtpProviderOptions } from './smtp.js';
export { batchLimitOf, createProviders } from './registry.js';
