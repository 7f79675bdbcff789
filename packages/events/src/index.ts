export { DELIVERY_EVENT_KINDS, type DeliveryEvent, type DeliveryEventKind, type EventProvider } from './event.js';
export { type VerifyFailure, type VerifyFailureCode, type VerifyResult } from './verify-result.js';
export {
  SNS_HOST_PATTERN,
  parseSnsEnvelope,
  snsStringToSign,
  verifySnsMessage,
  type SnsEnvelope,
  type VerifySnsOptions,
} from './sns.js';
export {
  SENDGRID_SIGNATURE_HEADER,
  SENDGRID_TIMESTAMP_HEADER,
  SENDGRID_MAX_EVENTS,
  normalizeSendgridEvents,
  sendgridPublicKey,
  verifySendgridSignature,
  type FreshnessOptions,
} from './sendgrid.js';
export {
  normalizeMailgunEvent,
  parseMailgunSignature,
  verifyMailgunSignature,
  type MailgunSignature,
} from './mailgun.js';
export { SES_MAX_RECIPIENTS, normalizeSesEvent } from './ses.js';
export { type EventWindow } from './internal/fields.js';
