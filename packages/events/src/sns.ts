import { X509Certificate, verify as verifySignature, type KeyObject } from 'node:crypto';
import { fail } from './internal/fail.js';
import type { VerifyResult } from './verify-result.js';
import { isObject } from './internal/fields.js';

/** An SNS HTTP(S) message envelope (the JSON body of the POST). */
export interface SnsEnvelope {
  Type: 'Notification' | 'SubscriptionConfirmation' | 'UnsubscribeConfirmation';
  MessageId: string;
  TopicArn: string;
  Message: string;
  Timestamp: string;
  SignatureVersion: '1' | '2';
  Signature: string;
  SigningCertURL: string;
  Subject?: string | undefined;
  SubscribeURL?: string | undefined;
  Token?: string | undefined;
  UnsubscribeURL?: string | undefined;
}

/**
 * SNS's own hosts (AWS `sns-validator`'s rule): a certificate or subscribe URL anywhere else
 * is forged, and fetching it would let anyone make us GET what they like.
 */
export const SNS_HOST_PATTERN = /^sns\.[a-zA-Z0-9-]{3,}\.amazonaws\.com(\.cn)?$/;

/** Options of {@link verifySnsMessage}. */
export interface VerifySnsOptions {
  /**
   * Fetches the PEM certificate at a `SigningCertURL` that passed the URL rule. Production:
   * an https GET with a timeout and a size cap; tests serve a certificate of their own.
   */
  fetchCertificate: (url: string) => Promise<string>;
  /** The only topics accepted. Empty accepts none. */
  topicArns: readonly string[];
  /** Hosts allowed for `SigningCertURL` and `SubscribeURL`. @defaultValue {@link SNS_HOST_PATTERN} */
  certHost?: RegExp | undefined;
  /**
   * Certificates by URL, shared between calls (AWS rotates them rarely). Pass one map per
   * process; without it every message fetches its certificate.
   */
  cache?: Map<string, Promise<KeyObject>> | undefined;
  /** Refuse messages whose `Timestamp` is further than this from now (replays older than any dedupe). */
  maxAgeSeconds?: number | undefined;
  /** The clock, epoch ms. @defaultValue `Date.now` */
  now?: (() => number) | undefined;
}

// The signed fields in AWS's fixed order, per type (sns-verify-signature-of-message).
const NOTIFICATION_FIELDS = ['Message', 'MessageId', 'Subject', 'Timestamp', 'TopicArn', 'Type'] as const;
const SUBSCRIPTION_FIELDS = ['Message', 'MessageId', 'SubscribeURL', 'Timestamp', 'Token', 'TopicArn', 'Type'] as const;
const CACHE_LIMIT = 100;

/**
 * The bytes SNS signs: `Key\nValue\n` for each field present, in AWS's order for the type.
 * Exported so emulators and tests sign exactly what is verified.
 */
export function snsStringToSign(envelope: SnsEnvelope): string {
  const fields = envelope.Type === 'Notification' ? NOTIFICATION_FIELDS : SUBSCRIPTION_FIELDS;
  let out = '';
  for (const f of fields) {
    const v = envelope[f];
    if (v !== undefined) out += `${f}\n${v}\n`;
  }
  return out;
}

/**
 * Reads an SNS body (SNS posts JSON as `text/plain`) into an envelope, or says what is
 * missing. Lambda-style spellings (`SigningCertUrl`, …) are accepted as SNS's validator does.
 */
export function parseSnsEnvelope(body: unknown): VerifyResult<SnsEnvelope> {
  let raw: unknown = body;
  if (typeof body === 'string') {
    try {
      raw = JSON.parse(body);
    } catch {
      return fail('malformed', 'the body is not JSON');
    }
  }
  if (!isObject(raw)) return fail('malformed', 'the body is not a JSON object');
  const e = { ...raw };
  if (e.SigningCertURL === undefined) e.SigningCertURL = e.SigningCertUrl;
  if (e.SubscribeURL === undefined) e.SubscribeURL = e.SubscribeUrl;
  if (e.UnsubscribeURL === undefined) e.UnsubscribeURL = e.UnsubscribeUrl;
  if (e.Type !== 'Notification' && e.Type !== 'SubscriptionConfirmation' && e.Type !== 'UnsubscribeConfirmation') {
    return fail('malformed', 'Type must be Notification, SubscriptionConfirmation or UnsubscribeConfirmation');
  }
  const required = ['MessageId', 'TopicArn', 'Message', 'Timestamp', 'Signature', 'SigningCertURL'];
  if (e.Type !== 'Notification') required.push('SubscribeURL', 'Token');
  for (const f of required) {
    if (typeof e[f] !== 'string' || e[f] === '') return fail('malformed', `${f} is missing`);
  }
  if (e.SignatureVersion !== '1' && e.SignatureVersion !== '2')
    return fail('malformed', 'SignatureVersion must be "1" or "2"');
  if (e.Subject !== undefined && typeof e.Subject !== 'string') return fail('malformed', 'Subject must be a string');
  return {
    ok: true,
    value: {
      Type: e.Type,
      MessageId: e.MessageId as string,
      TopicArn: e.TopicArn as string,
      Message: e.Message as string,
      Timestamp: e.Timestamp as string,
      SignatureVersion: e.SignatureVersion,
      Signature: e.Signature as string,
      SigningCertURL: e.SigningCertURL as string,
      Subject: e.Subject,
      SubscribeURL: e.SubscribeURL as string | undefined,
      Token: e.Token as string | undefined,
      UnsubscribeURL: e.UnsubscribeURL as string | undefined,
    },
  };
}

function allowedUrl(value: string, host: RegExp, pem: boolean): boolean {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return false;
  }
  return (
    url.protocol === 'https:' &&
    host.test(url.hostname) &&
    (!pem || url.pathname.endsWith('.pem')) &&
    url.username === '' &&
    url.password === ''
  );
}

async function certificateKey(url: string, options: VerifySnsOptions): Promise<KeyObject> {
  const cache = options.cache;
  const hit = cache?.get(url);
  if (hit) return hit;
  const loading = options.fetchCertificate(url).then((pem) => new X509Certificate(pem).publicKey);
  if (cache) {
    if (cache.size >= CACHE_LIMIT) cache.delete(cache.keys().next().value!);
    cache.set(url, loading);
    // A failed fetch must not stick: the next message tries again.
    loading.catch(() => cache.delete(url));
  }
  return loading;
}

/**
 * Verifies an SNS message: the envelope's shape, the `SigningCertURL` rule, the topic
 * allow-list, the `SubscribeURL` host (for confirmations: it is what we would GET), the
 * freshness window when given, and last the RSA signature (v1 SHA1, v2 SHA256) with the
 * certificate's key. Cheap checks come first so a forged message never makes us fetch.
 */
export async function verifySnsMessage(body: unknown, options: VerifySnsOptions): Promise<VerifyResult<SnsEnvelope>> {
  const parsed = parseSnsEnvelope(body);
  if (!parsed.ok) return parsed;
  const e = parsed.value;
  const host = options.certHost ?? SNS_HOST_PATTERN;
  if (!allowedUrl(e.SigningCertURL, host, true)) {
    return fail('forbidden_cert_url', 'SigningCertURL must be an https .pem URL on an SNS host');
  }
  if (!options.topicArns.includes(e.TopicArn)) return fail('forbidden_topic', 'TopicArn is not an accepted topic');
  if (e.Type !== 'Notification' && !allowedUrl(e.SubscribeURL!, host, false)) {
    return fail('forbidden_subscribe_url', 'SubscribeURL must be an https URL on an SNS host');
  }
  if (options.maxAgeSeconds !== undefined) {
    const at = Date.parse(e.Timestamp);
    const now = (options.now ?? Date.now)();
    if (!Number.isFinite(at)) return fail('malformed', 'Timestamp is not a date');
    if (Math.abs(now - at) > options.maxAgeSeconds * 1000)
      return fail('stale', 'Timestamp is outside the accepted window');
  }
  let key: KeyObject;
  try {
    key = await certificateKey(e.SigningCertURL, options);
  } catch {
    return fail('certificate_unavailable', 'the signing certificate could not be fetched or read');
  }
  const signature = Buffer.from(e.Signature, 'base64');
  if (signature.length === 0) return fail('malformed', 'Signature is not base64');
  const algorithm = e.SignatureVersion === '1' ? 'RSA-SHA1' : 'RSA-SHA256';
  let ok = false;
  try {
    ok = verifySignature(algorithm, Buffer.from(snsStringToSign(e), 'utf8'), key, signature);
  } catch {
    ok = false;
  }
  return ok ? { ok: true, value: e } : fail('bad_signature', 'the SNS signature does not verify');
}
