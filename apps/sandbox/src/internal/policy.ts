import type { DomainBehaviour, Scenario } from '../scenario.js';
import { bareAddress, compileAddressPattern, domainOf } from './address.js';
import { TokenBucket, type BucketState } from './bucket.js';

/** A refusal of one recipient, in precedence order (the first that applies wins). */
export type RefusalKind = 'drop-before-data' | 'bounce' | 'block' | 'busy-recipient' | 'defer' | 'fail' | 'greylist';

/** What the sandbox does with one message (HTTP) or one RCPT (SMTP), decided on arrival. */
export type Decision =
  | {
      kind: 'accept';
      latencyMs: number;
      /** Receive the data, record it as accepted, then destroy the connection unanswered. */
      dropAfterData: boolean;
    }
  | { kind: RefusalKind; address: string; latencyMs: number }
  | {
      kind: 'throttle';
      latencyMs: number;
      /** The SMTP reply to send, from the scenario. */
      throttleReply: string;
      /** Milliseconds until the domain's bucket holds a token again. */
      retryAfterMs: number;
    };

/** Given for SMTP: behaviours that exist only there (greylisting, drops at RCPT) then apply. */
export interface SmtpEnvelope {
  /** The MAIL FROM address, for greylisting pairs. */
  mailFrom: string;
}

type Matcher = (address: string) => boolean;
type ListKey = 'dropBeforeData' | 'bounce' | 'block' | 'busyRecipient' | 'defer' | 'fail' | 'dropAfterData';

interface Compiled {
  behaviour: DomainBehaviour;
  lists: Record<ListKey, Matcher[]>;
}

const LIST_KEYS: readonly ListKey[] = [
  'dropBeforeData',
  'bounce',
  'block',
  'busyRecipient',
  'defer',
  'fail',
  'dropAfterData',
];

// Receiver-side refusals: an HTTP ESP takes the message and learns of these later, by webhook.
const SMTP_ONLY = new Set<RefusalKind>(['drop-before-data', 'block', 'busy-recipient', 'defer', 'greylist']);

const REFUSALS: readonly { kind: Exclude<RefusalKind, 'greylist'>; list: ListKey }[] = [
  { kind: 'drop-before-data', list: 'dropBeforeData' },
  { kind: 'bounce', list: 'bounce' },
  { kind: 'block', list: 'block' },
  { kind: 'busy-recipient', list: 'busyRecipient' },
  { kind: 'defer', list: 'defer' },
  { kind: 'fail', list: 'fail' },
];

function compile(behaviour: DomainBehaviour): Compiled {
  const lists = {} as Record<ListKey, Matcher[]>;
  for (const key of LIST_KEYS) lists[key] = behaviour[key].map(compileAddressPattern);
  return { behaviour, lists };
}

/**
 * One scenario made executable: address matchers compiled once, one token bucket per
 * recipient domain (unlisted domains each get their own bucket sized by `default`) and the
 * greylisting pairs seen. Replacing the scenario replaces the whole policy, so buckets start
 * full again and greylisting starts over.
 */
export class Policy {
  private readonly fallback: Compiled;
  private readonly domains = new Map<string, Compiled>();
  private readonly buckets = new Map<string, TokenBucket>();
  private readonly greylisted = new Set<string>();

  constructor(readonly scenario: Scenario) {
    this.fallback = compile(scenario.default);
    for (const [domain, behaviour] of Object.entries(scenario.domains)) this.domains.set(domain, compile(behaviour));
  }

  /** Behaviour of a lower-case domain. */
  behaviourOf(domain: string): DomainBehaviour {
    return this.compiledOf(domain).behaviour;
  }

  /** Whether `address` is on its domain's list of hard bounces (no rate spent, nothing decided). */
  bounces(address: string): boolean {
    const a = bareAddress(address);
    return this.compiledOf(domainOf(a)).lists.bounce.some((matches) => matches(a));
  }

  /**
   * Decides for a message whose rate domain is `domain` (its first recipient's) and whose
   * recipients are `recipients`, at monotonic time `nowMs`. Each recipient is judged by its
   * own domain's behaviour; refusals win over throttling and spend no token, as an ESP checks
   * recipients before counting the send. Without `smtp`, SMTP-only refusals are skipped.
   */
  decide(domain: string, recipients: readonly string[], nowMs: number, smtp?: SmtpEnvelope): Decision {
    const own = this.compiledOf(domain).behaviour;
    const latencyMs = own.latencyMs;
    const addresses = recipients.map(bareAddress);
    for (const { kind, list } of REFUSALS) {
      if (smtp === undefined && SMTP_ONLY.has(kind)) continue;
      const address = addresses.find((a) => this.compiledOf(domainOf(a)).lists[list].some((matches) => matches(a)));
      if (address !== undefined) return { kind, address, latencyMs };
    }
    if (smtp !== undefined) {
      const from = bareAddress(smtp.mailFrom);
      for (const address of addresses) {
        if (!this.compiledOf(domainOf(address)).behaviour.greylist) continue;
        const pair = `${from}\n${address}`;
        if (this.greylisted.has(pair)) continue;
        this.greylisted.add(pair);
        return { kind: 'greylist', address, latencyMs };
      }
    }
    const bucket = this.bucketOf(domain);
    if (bucket !== undefined && !bucket.take(nowMs)) {
      return {
        kind: 'throttle',
        latencyMs,
        throttleReply: own.throttleReply,
        retryAfterMs: bucket.state(nowMs).waitMs,
      };
    }
    const dropAfterData = addresses.some((a) => this.compiledOf(domainOf(a)).lists.dropAfterData.some((m) => m(a)));
    return { kind: 'accept', latencyMs, dropAfterData };
  }

  /** The rate bucket of `domain` at monotonic time `nowMs`; `undefined` when it has no rate. */
  rateState(domain: string, nowMs: number): BucketState | undefined {
    return this.bucketOf(domain)?.state(nowMs);
  }

  /** Forgets bucket and greylisting state: every bucket is full again, every pair unseen. */
  resetState(): void {
    this.buckets.clear();
    this.greylisted.clear();
  }

  private compiledOf(domain: string): Compiled {
    return this.domains.get(domain) ?? this.fallback;
  }

  private bucketOf(domain: string): TokenBucket | undefined {
    const { rate, burst } = this.compiledOf(domain).behaviour;
    if (rate === undefined) return undefined;
    let bucket = this.buckets.get(domain);
    if (bucket === undefined) {
      bucket = new TokenBucket(rate, burst ?? Math.max(1, rate));
      this.buckets.set(domain, bucket);
    }
    return bucket;
  }
}
