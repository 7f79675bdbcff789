import type { Logger } from 'pino';
import type { AcceptedMessage, Recorder } from '../recorder.js';
import type { Scenario } from '../scenario.js';
import type { Policy } from './policy.js';

/** An SES template's content, as CreateEmailTemplate takes it. */
export interface EmailTemplate {
  Subject?: string | undefined;
  Text?: string | undefined;
  Html?: string | undefined;
}

/** The keys a webhook receiver needs to verify what the sandbox posts, as each ESP shows them. */
export interface WebhookKeys {
  /** SendGrid's verification key: base64 SPKI DER of a P-256 key (`MFkwEwYHKoZIzj0CAQYI…`). */
  sendgridPublicKey: string;
  /** Mailgun's HTTP webhook signing key. */
  mailgunSigningKey: string;
  /** SNS's signing certificate (PEM); unset when it could not be made (no openssl CLI). */
  snsCertificate: string | undefined;
  /**
   * The https `SigningCertURL` of SNS notifications, served with the certificate itself as
   * TLS certificate; unset like `snsCertificate`.
   */
  snsCertUrl: string | undefined;
}

/** What the protocol handlers share with the sandbox that owns them. */
export interface SandboxContext {
  readonly logger: Logger;
  readonly recorder: Recorder;
  /** The key SigV4 `Credential=` must name, if any. */
  readonly accessKeyId: string | undefined;
  readonly sessionToken: string | undefined;
  /** The SendGrid `Authorization: Bearer` key, if one is required. */
  readonly sendgridApiKey: string | undefined;
  /** The Mailgun Basic auth key (user `api`), if one is required. */
  readonly mailgunApiKey: string | undefined;
  /** SES email templates by name (CreateEmailTemplate), kept until the sandbox closes. */
  readonly templates: Map<string, EmailTemplate>;
  /** The current policy; replaced as a whole by `setScenario`. */
  policy(): Policy;
  /** Validates and installs a scenario; throws `ScenarioError`. */
  setScenario(input: unknown): void;
  scenario(): Scenario;
  reset(): void;
  /**
   * Schedules the webhook reports of an accepted message (its bounce, complaint, delivery);
   * `bounce`: it bounces for certain (a batch's recipient on the bounce list, which the ESP took).
   */
  report(message: AcceptedMessage, bounce?: boolean): void;
  /** What `GET /_sandbox/webhook-keys` shows. */
  webhookKeys(): WebhookKeys;
  /** Resolves after `ms`, or at once when the sandbox closes, so no timer outlives it. */
  wait(ms: number): Promise<void>;
}

/** A request whose body has fully arrived. */
export interface Arrival {
  body: Buffer;
  tooLarge: boolean;
  /** Epoch ms: what is recorded. */
  arrivedAt: number;
  /** Monotonic ms: what buckets are measured on, immune to wall-clock steps. */
  arrivedMono: number;
}
