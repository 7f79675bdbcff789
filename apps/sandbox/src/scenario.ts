import { z } from 'zod';

/** What one recipient domain does with the mail sent to it. */
export interface DomainBehaviour {
  /** Milliseconds added before answering a SendEmail for this domain. @defaultValue `0` */
  latencyMs: number;
  /** Accepted messages per second; above it the answer is 429. Unset means no limit. */
  rate?: number;
  /** Messages accepted at once from idle. @defaultValue `max(1, rate)` when `rate` is set */
  burst?: number;
  /**
   * Recipients that hard-bounce: exact addresses (case-insensitive) or globs where `*`
   * matches any run of characters, e.g. `bounce-*@example.com`. @defaultValue `[]`
   */
  bounce: string[];
}

/** What GetAccount reports. */
export interface AccountQuota {
  /** `SendQuota.MaxSendRate`. @defaultValue `1000` */
  maxSendRate: number;
  /** `SendQuota.Max24HourSend`; `-1` means unlimited, as in SES. @defaultValue `1000000` */
  max24HourSend: number;
  /** `SendingEnabled`. Reported only: sends are not refused when it is false. @defaultValue `true` */
  sendingEnabled: boolean;
}

/** A validated scenario: how the sandbox behaves per recipient domain. */
export interface Scenario {
  account: AccountQuota;
  /** Behaviour of every domain not listed in `domains`. */
  default: DomainBehaviour;
  /** Behaviour per domain; keys are lower-case. A listed domain does not inherit `default`. */
  domains: Record<string, DomainBehaviour>;
}

/** Thrown when a scenario does not validate. `path` names the first bad field. */
export class ScenarioError extends Error {
  /** Stable code; the error is permanent until the scenario is fixed. */
  readonly code = 'invalid_scenario';
  /** Dotted field path, e.g. `domains.example.com.rate`, or `(root)`. */
  readonly path: string;

  constructor(message: string, path: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'ScenarioError';
    this.path = path;
  }
}

const domainBehaviourSchema = z
  .strictObject({
    latencyMs: z.number().int().min(0).max(600_000).default(0),
    rate: z.number().min(0, { message: 'must be a number of messages per second >= 0' }).optional(),
    burst: z.number().min(0, { message: 'must be a number >= 0' }).optional(),
    bounce: z.array(z.string().min(1).includes('@', { message: 'must be an address or a glob with @' })).default([]),
  })
  .transform((b): DomainBehaviour => {
    const out: DomainBehaviour = { latencyMs: b.latencyMs, bounce: b.bounce };
    if (b.rate !== undefined) {
      out.rate = b.rate;
      out.burst = b.burst ?? Math.max(1, b.rate);
    } else if (b.burst !== undefined) {
      // Kept so a scenario round-trips, though without a rate there is no bucket to size.
      out.burst = b.burst;
    }
    return out;
  });

const DOMAIN = /^[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)*$/;

const scenarioSchema = z.strictObject({
  account: z
    .strictObject({
      maxSendRate: z.number().positive().default(1000),
      max24HourSend: z.number().min(-1).default(1_000_000),
      sendingEnabled: z.boolean().default(true),
    })
    .prefault({}),
  default: domainBehaviourSchema.prefault({}),
  domains: z.record(z.string().regex(DOMAIN, { message: 'must be a domain name' }), domainBehaviourSchema).default({}),
});

function formatPath(path: readonly PropertyKey[]): string {
  return path.length === 0 ? '(root)' : path.map(String).join('.');
}

/**
 * Validates a scenario (a parsed YAML or JSON value) and fills in defaults.
 * `undefined` and `null` mean the empty scenario: no limits, no bounces, no latency.
 *
 * @throws {@link ScenarioError} naming the first bad field's path.
 */
export function parseScenario(input: unknown): Scenario {
  const result = scenarioSchema.safeParse(input ?? {});
  if (!result.success) {
    const issue = result.error.issues[0];
    let path: PropertyKey[] = issue?.path ?? [];
    let message = issue?.message ?? 'invalid';
    // zod reports unknown keys on the parent object; naming the key itself is what a reader needs.
    if (issue?.code === 'unrecognized_keys' && issue.keys[0] !== undefined) {
      path = [...path, issue.keys[0]];
      message = 'unknown key';
    }
    const more = result.error.issues.length > 1 ? ` (and ${result.error.issues.length - 1} more)` : '';
    const where = formatPath(path);
    throw new ScenarioError(`invalid scenario at ${where}: ${message}${more}`, where, { cause: result.error });
  }
  const { account, default: fallback, domains } = result.data;
  const lowered: Record<string, DomainBehaviour> = {};
  for (const [domain, behaviour] of Object.entries(domains)) {
    const key = domain.toLowerCase();
    // Domains are matched case-insensitively, so two spellings of one domain are ambiguous.
    if (Object.hasOwn(lowered, key)) {
      const where = `domains.${domain}`;
      throw new ScenarioError(`invalid scenario at ${where}: duplicates domain ${key}`, where);
    }
    lowered[key] = behaviour;
  }
  return { account, default: fallback, domains: lowered };
}
