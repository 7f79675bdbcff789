/** The wire protocol a message arrived by. */
export type Protocol = 'ses' | 'sendgrid' | 'mailgun' | 'smtp';

/** One message the sandbox accepted, as it arrived. */
export interface AcceptedMessage {
  /** How it arrived. */
  protocol: Protocol;
  /**
   * The id the sandbox answered with: SES `MessageId`, SendGrid `X-Message-Id`, Mailgun `id`
   * (with its angle brackets) or the SMTP queue id of `250 2.0.0 OK queued as <id>`.
   */
  providerMessageId: string;
  /** The `Message-ID` header value as sent, e.g. `<id@host>`. */
  messageId: string | undefined;
  /**
   * The sluice id: SES tag `sluice_id`, SendGrid `custom_args.sluice_id`, Mailgun `v:sluice_id`,
   * or an `X-Sluice-Id` header (SMTP and Mailgun MIME; none on an SMTP message shared by
   * several recipients, whose `X-Sluice-Batch` is the tag `sluice_batch`).
   */
  sluiceId: string | undefined;
  /** The sender as sent (SMTP: the MAIL FROM address). */
  from: string;
  /** The To addresses as sent (SMTP: the accepted RCPT TO address; a message of several RCPTs is one arrival each). */
  to: string[];
  /** The subject; for a template without one, the template's id or name. */
  subject: string | undefined;
  /** Lower-case domain of the first recipient: the one whose behaviour applied. */
  domain: string;
  /** Epoch ms when the whole message had arrived, before any added latency. */
  arrivedAt: number;
  /** Tags as a map (SES `EmailTags`, SendGrid `custom_args`, Mailgun `v:`); see the protocols. */
  tags: Record<string, string>;
}

/** Outcome counts of one recipient domain. */
export interface DomainStats {
  accepted: number;
  /** Refused for the domain's rate. */
  throttled: number;
  /** Refused for good: hard bounces and (SMTP) blocks. */
  rejected: number;
  /** Refused for now: SMTP 4xx other than a throttle (defer, fail, greylist), HTTP 5xx. */
  deferred: number;
  /** Connections destroyed unanswered, before DATA or after an accepted message arrived. */
  dropped: number;
}

/** Outcome counts since start or the last reset. SMTP refusals count once per RCPT. */
export interface SandboxStats extends DomainStats {
  /** Epoch ms the first accepted message arrived (`arrivedAt`); absent before one has. */
  firstArrivedAt?: number;
  /** Epoch ms the latest accepted message arrived; absent before one has. */
  lastArrivedAt?: number;
  /** Accepted messages whose Message-ID (or, without one, sluice id) was accepted before. */
  duplicates: number;
  /** Webhook reports (bounces, complaints, deliveries) posted and answered 2xx. */
  webhooksSent: number;
  /** Webhook posts that failed: not answered, or answered other than 2xx (each redelivery counts). */
  webhooksFailed: number;
  /** Posts of a report after its first (`webhooks.redeliverMs`). */
  webhooksRedelivered: number;
  byDomain: Record<string, DomainStats>;
}

type Outcome = Exclude<keyof DomainStats, 'accepted'>;

const emptyTotals = () => ({
  ...emptyCounts(),
  duplicates: 0,
  webhooksSent: 0,
  webhooksFailed: 0,
  webhooksRedelivered: 0,
});

/** One webhook report the sandbox decided on, and how its posts went. */
export interface WebhookReport {
  kind: 'bounce' | 'complaint' | 'delivery';
  /** The ESP whose webhook carries it. */
  protocol: Exclude<Protocol, 'smtp'>;
  sluiceId: string | undefined;
  recipient: string;
  /** Posts so far (the first and each redelivery). */
  posts: number;
  /** Answered 2xx. */
  answered: boolean;
  /** Given up: refused for good (Mailgun's 406), or out of redeliveries. */
  abandoned: boolean;
}

function emptyCounts(): DomainStats {
  return { accepted: 0, throttled: 0, rejected: 0, deferred: 0, dropped: 0 };
}

/**
 * The duplicate key: a Message-ID (the same with or without its angle brackets) at a
 * recipient; one message shared by several recipients (SMTP) arrives once at each.
 */
function duplicateKey(message: AcceptedMessage): string | undefined {
  const to = message.to.map((a) => a.toLowerCase()).join(',');
  // Prefixes keep a Message-ID and a sluice id with the same text from colliding.
  if (message.messageId !== undefined)
    return `message-id:${message.messageId.trim().replace(/^<(.*)>$/, '$1')} to:${to}`;
  if (message.sluiceId !== undefined) return `sluice-id:${message.sluiceId}`;
  return undefined;
}

/**
 * What a sandbox keeps of each accepted message: all of it (`messages`, for `accepted()`), or
 * only its counts, arrival time and duplicate key (`counts`: a campaign of millions).
 */
export type Keep = 'messages' | 'counts';

const PROTOCOLS: readonly Protocol[] = ['ses', 'sendgrid', 'mailgun', 'smtp'];

const emptyArrivals = (): Record<Protocol, number[]> => ({ ses: [], sendgrid: [], mailgun: [], smtp: [] });

/** Keeps what the sandbox decided, in arrival order. */
export class Recorder {
  private messages: AcceptedMessage[] = [];
  /**
   * Each accepted message's arrival time, by protocol, ascending: `acceptedSince` is a binary
   * search, not a scan, and their lengths are the accepted count.
   */
  private arrivals = emptyArrivals();
  private seen = new Set<string>();
  private totals = emptyTotals();
  private domains = new Map<string, DomainStats>();

  constructor(private readonly keep: Keep = 'messages') {}

  /** Whether `accepted()` has the messages (`keep: 'messages'`). */
  get keepsMessages(): boolean {
    return this.keep === 'messages';
  }

  /** Records an accepted message; says whether it repeats an earlier one (on any protocol). */
  accept(message: AcceptedMessage): { duplicate: boolean } {
    if (this.keep === 'messages') this.messages.push(message);
    insertSorted(this.arrivals[message.protocol], message.arrivedAt);
    this.domain(message.domain).accepted += 1;
    const key = duplicateKey(message);
    if (key === undefined) return { duplicate: false };
    if (this.seen.has(key)) {
      this.totals.duplicates += 1;
      return { duplicate: true };
    }
    this.seen.add(key);
    return { duplicate: false };
  }

  /** Counts a message (SMTP: a recipient) refused with `outcome`. */
  count(domain: string, outcome: Outcome): void {
    this.totals[outcome] += 1;
    this.domain(domain)[outcome] += 1;
  }

  private webhookReports: WebhookReport[] = [];

  /** Counts a webhook post as answered 2xx (`sent`) or not (`failed`), and a redelivery. */
  countWebhook(result: 'sent' | 'failed', redelivery = false): void {
    if (result === 'sent') this.totals.webhooksSent += 1;
    else this.totals.webhooksFailed += 1;
    if (redelivery) this.totals.webhooksRedelivered += 1;
  }

  /** Keeps a report the reporter decided on; the reporter updates it as its posts go. */
  report(report: WebhookReport): WebhookReport {
    this.webhookReports.push(report);
    return report;
  }

  /** Every webhook report decided so far, in order (a copy). */
  reports(): WebhookReport[] {
    return this.webhookReports.map((r) => ({ ...r }));
  }

  /**
   * Accepted messages in arrival order (a copy).
   * @throws when this sandbox keeps counts only (`keep: 'counts'`)
   */
  accepted(): AcceptedMessage[] {
    if (this.keep === 'counts') {
      throw new Error("sandbox: started with keep: 'counts', it keeps no messages to list (stats() has the counts)");
    }
    return this.messages.map((m) => ({ ...m, to: [...m.to], tags: { ...m.tags } }));
  }

  /** How many messages arrived at or after `sinceMs` (epoch) and were accepted. */
  acceptedSince(sinceMs: number, protocol?: AcceptedMessage['protocol']): number {
    let count = 0;
    for (const p of protocol === undefined ? PROTOCOLS : [protocol]) {
      const times = this.arrivals[p];
      count += times.length - firstAtOrAfter(times, sinceMs);
    }
    return count;
  }

  /** Current counts (a copy). */
  stats(): SandboxStats {
    const byDomain: Record<string, DomainStats> = {};
    for (const [domain, counts] of this.domains) byDomain[domain] = { ...counts };
    let accepted = 0;
    let first = Infinity;
    let last = -Infinity;
    for (const times of Object.values(this.arrivals)) {
      if (times.length === 0) continue;
      accepted += times.length;
      first = Math.min(first, times[0]!);
      last = Math.max(last, times.at(-1)!);
    }
    return {
      ...this.totals,
      accepted,
      ...(accepted > 0 ? { firstArrivedAt: first, lastArrivedAt: last } : {}),
      byDomain,
    };
  }

  /** Forgets every record and count. */
  reset(): void {
    this.messages = [];
    this.arrivals = emptyArrivals();
    this.seen = new Set();
    this.totals = emptyTotals();
    this.domains = new Map();
    this.webhookReports = [];
  }

  private domain(name: string): DomainStats {
    let counts = this.domains.get(name);
    if (counts === undefined) {
      counts = emptyCounts();
      this.domains.set(name, counts);
    }
    return counts;
  }
}

/** Inserts `value` into ascending `times`: at the end, or (answered out of order) a few back. */
function insertSorted(times: number[], value: number): void {
  let at = times.length;
  while (at > 0 && times[at - 1]! > value) at -= 1;
  if (at === times.length) times.push(value);
  else times.splice(at, 0, value);
}

/** The index of the first of ascending `times` at or after `since`. */
function firstAtOrAfter(times: readonly number[], since: number): number {
  let low = 0;
  let high = times.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if (times[mid]! < since) low = mid + 1;
    else high = mid;
  }
  return low;
}
