/** One SendEmail the sandbox accepted, as it arrived. */
export interface AcceptedMessage {
  /** The `MessageId` the sandbox answered with. */
  sesMessageId: string;
  /** The `Message-ID` header value as sent, e.g. `<id@host>`; from `Headers`, or the raw MIME. */
  messageId: string | undefined;
  /** Value of the `EmailTags` entry named `sluice_id`, if present. */
  sluiceId: string | undefined;
  /** `FromEmailAddress` as sent. */
  from: string;
  /** `Destination.ToAddresses` as sent. */
  to: string[];
  /** `Subject.Data` (Simple), the `Subject` header (Raw) or `TemplateContent.Subject` (Template). */
  subject: string | undefined;
  /** Lower-case domain of the first recipient: the one whose behaviour applied. */
  domain: string;
  /** Epoch ms when the full request body had arrived, before any added latency. */
  arrivedAt: number;
  /** `EmailTags` as a map; a repeated name keeps its last value. */
  tags: Record<string, string>;
}

/** Outcome counts of one recipient domain. */
export interface DomainStats {
  accepted: number;
  throttled: number;
  rejected: number;
}

/** Outcome counts since start or the last reset. */
export interface SandboxStats {
  accepted: number;
  throttled: number;
  rejected: number;
  /** Accepted messages whose Message-ID (or, without one, `sluice_id` tag) was accepted before. */
  duplicates: number;
  byDomain: Record<string, DomainStats>;
}

/** Keeps what the sandbox decided, in arrival order. */
export class Recorder {
  private messages: AcceptedMessage[] = [];
  private seen = new Set<string>();
  private totals = { throttled: 0, rejected: 0, duplicates: 0 };
  private domains = new Map<string, DomainStats>();

  /** Records an accepted message; says whether it repeats an earlier one. */
  accept(message: AcceptedMessage): { duplicate: boolean } {
    this.messages.push(message);
    this.domain(message.domain).accepted += 1;
    // Prefixes keep a Message-ID and a sluice_id with the same text from colliding.
    const key =
      message.messageId !== undefined
        ? `message-id:${message.messageId}`
        : message.sluiceId !== undefined
          ? `sluice-id:${message.sluiceId}`
          : undefined;
    if (key === undefined) return { duplicate: false };
    if (this.seen.has(key)) {
      this.totals.duplicates += 1;
      return { duplicate: true };
    }
    this.seen.add(key);
    return { duplicate: false };
  }

  /** Counts a message answered with 429. */
  throttle(domain: string): void {
    this.totals.throttled += 1;
    this.domain(domain).throttled += 1;
  }

  /** Counts a message answered with a hard bounce. */
  reject(domain: string): void {
    this.totals.rejected += 1;
    this.domain(domain).rejected += 1;
  }

  /** Accepted messages in arrival order (a copy). */
  accepted(): AcceptedMessage[] {
    return this.messages.map((m) => ({ ...m, to: [...m.to], tags: { ...m.tags } }));
  }

  /** How many messages arrived at or after `sinceMs` (epoch) and were accepted. */
  acceptedSince(sinceMs: number): number {
    let count = 0;
    for (let i = this.messages.length - 1; i >= 0 && (this.messages[i]?.arrivedAt ?? 0) >= sinceMs; i--) count += 1;
    return count;
  }

  /** Current counts (a copy). */
  stats(): SandboxStats {
    const byDomain: Record<string, DomainStats> = {};
    for (const [domain, counts] of this.domains) byDomain[domain] = { ...counts };
    return { accepted: this.messages.length, ...this.totals, byDomain };
  }

  /** Forgets every record and count. */
  reset(): void {
    this.messages = [];
    this.seen = new Set();
    this.totals = { throttled: 0, rejected: 0, duplicates: 0 };
    this.domains = new Map();
  }

  private domain(name: string): DomainStats {
    let counts = this.domains.get(name);
    if (counts === undefined) {
      counts = { accepted: 0, throttled: 0, rejected: 0 };
      this.domains.set(name, counts);
    }
    return counts;
  }
}
