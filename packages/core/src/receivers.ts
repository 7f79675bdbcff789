import type { ReceiverPolicy, SluiceConfig } from './config.js';

/** The receiver bucket a recipient domain falls in. */
export interface ReceiverLimit {
  /** The bucket's name: the policy's name, or the domain itself. */
  name: string;
  /** Per second; undefined means no receiver limit. */
  rate: number | undefined;
  burst: number | undefined;
}

function matches(policy: ReceiverPolicy, domain: string): boolean {
  return policy.domains.some((d) =>
    d.startsWith('*.') ? domain === d.slice(2) || domain.endsWith(d.slice(1)) : domain === d,
  );
}

/**
 * Finds the receiver policy for a recipient domain: the first policy that matches, else
 * a bucket of the domain's own with `defaults.receiver`.
 */
export function receiverFor(config: SluiceConfig, domain: string): ReceiverLimit {
  const policy = config.receivers.find((p) => matches(p, domain));
  if (policy) return { name: policy.name, rate: policy.rate, burst: policy.burst };
  return { name: domain, rate: config.defaults.receiver.rate, burst: config.defaults.receiver.burst };
}
