/**
 * Why a webhook was refused. Stable: the API answers with these codes.
 *
 * - `malformed`: not the shape the ESP sends (missing fields, bad JSON, bad base64, an
 *   event's time outside the accepted window); `field` names the first bad one.
 * - `too_many_events`: more events in one request than a route takes (see the API's limits).
 * - `bad_signature`: the signature does not verify.
 * - `stale`: the signed timestamp is outside the freshness window (a replay, or a clock off).
 * - `forbidden_cert_url`: the SNS `SigningCertURL` is not https, `.pem`, on an SNS host.
 * - `forbidden_topic`: an SNS `TopicArn` not in the allow-list.
 * - `forbidden_subscribe_url`: an SNS `SubscribeURL` not https on an SNS host.
 * - `certificate_unavailable`: the SNS certificate could not be fetched or read (ours to retry).
 */
export type VerifyFailureCode =
  | 'malformed'
  | 'too_many_events'
  | 'bad_signature'
  | 'stale'
  | 'forbidden_cert_url'
  | 'forbidden_topic'
  | 'forbidden_subscribe_url'
  | 'certificate_unavailable';

/** A refused webhook: a code and a message safe to return (never a key or a signature). */
export interface VerifyFailure {
  ok: false;
  code: VerifyFailureCode;
  message: string;
  /** The field at fault, as a path into what the ESP sent (`event-data.timestamp`, `3.email`). */
  field?: string | undefined;
}

/** The outcome of a verification: the verified value, or why not. */
export type VerifyResult<T> = { ok: true; value: T } | VerifyFailure;
