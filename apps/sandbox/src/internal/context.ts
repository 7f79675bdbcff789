import type { Logger } from 'pino';
import type { Recorder } from '../recorder.js';
import type { Scenario } from '../scenario.js';
import type { Policy } from './policy.js';

/** What the protocol handlers share with the sandbox that owns them. */
export interface SandboxContext {
  readonly logger: Logger;
  readonly recorder: Recorder;
  /** The key SigV4 `Credential=` must name, if any. */
  readonly accessKeyId: string | undefined;
  /** The SendGrid `Authorization: Bearer` key, if one is required. */
  readonly sendgridApiKey: string | undefined;
  /** The Mailgun Basic auth key (user `api`), if one is required. */
  readonly mailgunApiKey: string | undefined;
  /** The current policy; replaced as a whole by `setScenario`. */
  policy(): Policy;
  /** Validates and installs a scenario; throws `ScenarioError`. */
  setScenario(input: unknown): void;
  scenario(): Scenario;
  reset(): void;
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
