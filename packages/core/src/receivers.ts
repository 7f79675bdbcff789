import type { ReceiverPolicy, SluiceConfig } from './config.js';
import { BUILT_IN_ORGANISATIONS } from './organisations.js';

/** The receiver bucket a recipient domain falls in. */
export interface ReceiverLimit {
  /** The bucket's name: the policy's name, the domain's organisation, or the domain itself. */
  name: string;
  /** Per second; undefined means no receiver limit. */
  rate: number | undefined;
  burst: number | undefined;
  /** Sends in flight at once per worker process (`receivers[].connections`); undefined: no own cap. */
  connections?: number;
}

function matches(policy: ReceiverPolicy, domain: string): boolean {
  return (policy.domains ?? []).some((d) =>
    d.startsWith('*.') ? domain === d.slice(2) || domain.endsWith(d.slice(1)) : domain === d,
  );
}

const fromPolicy = (p: ReceiverPolicy): ReceiverLimit => ({
  name: p.name,
  rate: p.rate,
  burst: p.burst,
  ...(p.connections !== undefined ? { connections: p.connections } : {}),
});
const fromDefaults = (config: SluiceConfig, name: string): ReceiverLimit => ({
  name,
  rate: config.defaults.receiver.rate,
  burst: config.defaults.receiver.burst,
});

/**
 * The receiver policy whose `domains` list the domain, if any. Config wins over DNS: a
 * domain listed here is never looked up.
 */
export function listedReceiver(config: SluiceConfig, domain: string): ReceiverLimit | undefined {
  const policy = config.receivers.find((p) => matches(p, domain));
  return policy ? fromPolicy(policy) : undefined;
}

/**
 * Finds the receiver policy for a recipient domain from config alone: the first policy
 * that lists it, else a bucket of the domain's own with `defaults.receiver`. The
 * scheduler also asks DNS for the domain's organisation (`receiverOfOrganisation`).
 */
export function receiverFor(config: SluiceConfig, domain: string): ReceiverLimit {
  return listedReceiver(config, domain) ?? fromDefaults(config, domain);
}

/**
 * The receiver of a domain not listed by any policy, given its organisation (from its MX
 * hosts): the policy naming that organisation (or named like it); else, for a known
 * organisation, a bucket named after the organisation with `defaults.receiver`, so all its
 * domains still share one bucket (the organisation throttles them as one, whatever limit
 * we configured); else the domain's own bucket.
 */
export function receiverOfOrganisation(
  config: SluiceConfig,
  domain: string,
  organisation: string | undefined,
): ReceiverLimit {
  if (organisation === undefined) return fromDefaults(config, domain);
  // A policy named like the organisation already owns that bucket key: use its limits, so
  // one key is never charged at two rates.
  const policy =
    config.receivers.find((p) => p.organisation === organisation) ??
    config.receivers.find((p) => p.name === organisation);
  return policy ? fromPolicy(policy) : fromDefaults(config, organisation);
}

/**
 * A receiver's limits by the name a dispatch job carries (`DispatchJobData.receiver`):
 * the policy of that name, else `defaults.receiver`. A worker re-admitting a message uses
 * this, so it charges the bucket the scheduler chose without asking DNS again.
 */
export function receiverNamed(config: SluiceConfig, name: string): ReceiverLimit {
  const policy = config.receivers.find((p) => p.name === name);
  return policy ? fromPolicy(policy) : fromDefaults(config, name);
}

/**
 * The receiving organisation behind a receiver bucket's name (`DispatchJobData.receiver`): its
 * policy's `organisation`, else the name itself when it names an organisation (a bucket named
 * after one), else undefined (a domain's own bucket). The reply classifier reads that
 * organisation's own rules first.
 */
export function organisationNamed(config: SluiceConfig, name: string): string | undefined {
  const policy = config.receivers.find((p) => p.name === name);
  if (policy?.organisation !== undefined) return policy.organisation;
  const known = [...config.organisations.patterns, ...(config.organisations.builtIn ? BUILT_IN_ORGANISATIONS : [])];
  return known.some((o) => o.name === name) ? name : undefined;
}
