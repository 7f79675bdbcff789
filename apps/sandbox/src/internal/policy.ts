import type { DomainBehaviour, Scenario } from '../scenario.js';
import { bareAddress, compileAddressPattern, domainOf } from './address.js';
import { TokenBucket } from './bucket.js';

/** What the sandbox does with one SendEmail, decided on arrival. */
export type Decision =
  | { kind: 'accept'; latencyMs: number }
  | { kind: 'bounce'; address: string; latencyMs: number }
  | { kind: 'throttle'; latencyMs: number };

interface Compiled {
  behaviour: DomainBehaviour;
  bounces: ((address: string) => boolean)[];
}

function compile(behaviour: DomainBehaviour): Compiled {
  return { behaviour, bounces: behaviour.bounce.map(compileAddressPattern) };
}

/**
 * One scenario made executable: bounce matchers compiled once, and one token bucket per
 * recipient domain (unlisted domains each get their own bucket sized by `default`).
 * Replacing the scenario replaces the whole policy, so buckets start full again.
 */
export class Policy {
  private readonly fallback: Compiled;
  private readonly domains = new Map<string, Compiled>();
  private readonly buckets = new Map<string, TokenBucket>();

  constructor(readonly scenario: Scenario) {
    this.fallback = compile(scenario.default);
    for (const [domain, behaviour] of Object.entries(scenario.domains)) this.domains.set(domain, compile(behaviour));
  }

  /** Behaviour of a lower-case domain. */
  behaviourOf(domain: string): DomainBehaviour {
    return (this.domains.get(domain) ?? this.fallback).behaviour;
  }

  /**
   * Decides for a message whose rate domain is `domain` (its first recipient's) and whose
   * recipients are `recipients`, at monotonic time `nowMs`. Bounces win over throttling
   * and do not spend a token, as SES checks recipients before counting the send.
   */
  decide(domain: string, recipients: readonly string[], nowMs: number): Decision {
    const own = this.domains.get(domain) ?? this.fallback;
    const latencyMs = own.behaviour.latencyMs;
    for (const recipient of recipients) {
      const address = bareAddress(recipient);
      const compiled = this.domains.get(domainOf(address)) ?? this.fallback;
      if (compiled.bounces.some((matches) => matches(address))) return { kind: 'bounce', address, latencyMs };
    }
    const { rate, burst } = own.behaviour;
    if (rate !== undefined) {
      let bucket = this.buckets.get(domain);
      if (bucket === undefined) {
        bucket = new TokenBucket(rate, burst ?? Math.max(1, rate));
        this.buckets.set(domain, bucket);
      }
      if (!bucket.take(nowMs)) return { kind: 'throttle', latencyMs };
    }
    return { kind: 'accept', latencyMs };
  }

  /** Forgets bucket state: every bucket is full again. */
  resetBuckets(): void {
    this.buckets.clear();
  }
}
