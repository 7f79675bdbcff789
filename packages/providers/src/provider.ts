import type { QueuedMessage } from '@sluice/core';
import type { Classification, Family, ReplyScope, ThrottleScope } from './classify.js';

/** What every non-accepted outcome carries for the attempt log. */
interface Classified {
  /** The reply verbatim: status, enhanced code and full text (SDK error name for HTTP). */
  reply: string;
  /** The classifier family. */
  family: Family;
  /** The id of the rule that matched, e.g. `smtp.rate-text`. */
  rule: string;
  /** `CLASSIFIER_VERSION` at classification. */
  version: string;
  /** The receiver's or provider's own hint ("try again in N s", `Retry-After`, `X-RateLimit-Reset`), ms from now. */
  retryAfterMs?: number;
  /** The RFC 3463 enhanced status code the classifier found in an SMTP reply, e.g. `5.7.1`. */
  enhanced?: string;
  /**
   * Whether the provider answered about the message: false when nothing came back (no
   * response, connection refused or lost) or its own server failed (HTTP 5xx).
   */
  answered: boolean;
  /** What the reply is about, when the classifier says (a throttle's scope; `pool` for a block-list listing). */
  scope?: ReplyScope;
}

/**
 * The one normalised outcome every adapter returns (docs/design/delivery-and-replies.md).
 */
export type Outcome =
  | { kind: 'accepted'; providerMessageId: string; reply: string; answered: true }
  /** Slow down: the provider or the receiver refused for rate; `scope` says whose rate to lower. */
  | (Classified & { kind: 'throttled'; scope: ThrottleScope })
  /** Temporary failure of a family; back off and retry. */
  | (Classified & { kind: 'deferred' })
  /** Permanent: never retried; `suppress` when the recipient itself is bad. */
  | (Classified & { kind: 'rejected'; suppress: boolean })
  /** The request may have been accepted (connection lost or timed out after its final bytes went out). */
  | { kind: 'ambiguous'; reply: string; answered: false };

/** What the worker hands an adapter with a message. */
export interface SendContext {
  /** The stable `Message-ID` header value, `<id@domain>`: the same on every attempt. */
  messageIdHeader: string;
  /**
   * The gate before the request's final bytes. The adapter hands over all of the request
   * but its last bytes (HTTP: the body's last byte; SMTP: the end of the message data, so
   * the terminating dot), then awaits this, and only when it resolves sends them: the
   * worker writes the record's `submitted` mark here. A crash before the mark leaves the
   * ESP an incomplete request it discards (safe to resend); one after it is known to be
   * ambiguous. When it rejects the request is aborted, never completed: the outcome is a
   * transient failure, not submitted.
   */
  beforeSubmit?: () => Promise<void>;
  signal?: AbortSignal;
  /**
   * The receiving organisation of the recipient's domain (`google`, `microsoft`… as
   * `packages/core`'s organisations name them), when known: an SMTP reply is read with that
   * organisation's own rules first (`classifyReply`'s `receiver`).
   */
  receiver?: string;
}

/**
 * One recipient of a batch: its message as a single send would carry it (rendered), with its
 * stable `Message-ID`. docs/design/batches.md.
 */
export interface BatchEntry {
  message: QueuedMessage;
  /** The message's stable `Message-ID` header value, `<id@domain>`. */
  messageIdHeader: string;
}

/** What the worker hands an adapter with a batch: the gate before the request's final bytes. */
export interface BatchContext {
  /**
   * The gate before the request's final bytes, as `SendContext.beforeSubmit`: the worker
   * writes every recipient's `submitted` mark here, in one script. When it rejects the request
   * is aborted, never completed.
   */
  beforeSubmit?: () => Promise<void>;
  signal?: AbortSignal;
  /** Names the request for logs and the tracker (`sluice_batch`): the batch job's id. */
  batchId: string;
  /** The receiving organisation every entry shares, when they share one (`SendContext.receiver`). */
  receiver?: string;
}

/** How an adapter sends batches: its limit, and which messages one call can carry together. */
export interface BatchSupport {
  /** The most recipients one call takes. */
  readonly maxEntries: number;
  /**
   * Why a message cannot go in a batch of this adapter (raw MIME, an ESP template by name…),
   * or undefined when it can. Such a message is sent alone.
   */
  refuses(message: QueuedMessage): string | undefined;
  /**
   * The key messages must share to go in one call (their sender and reply-to, for SES): the
   * batch's recipients are grouped by it before a call.
   */
  groupKey(message: QueuedMessage): string;
  /**
   * Sends the entries in one call: one outcome per entry, in order. Where the ESP answers per
   * entry each outcome is that entry's; where it answers once, that answer is every entry's.
   * An error for the whole call (a 429, a 5xx, no answer) is every entry's.
   */
  send(entries: readonly BatchEntry[], context: BatchContext): Promise<Outcome[]>;
}

/** What `check()` learned. */
export type CheckResult =
  | {
      ok: true;
      detail: string;
      /** SES `GetAccount`: the account's own limits, which the provider layer is never configured above. */
      quota?: { maxSendRate: number; max24HourSend: number; sentLast24Hours: number; sendingEnabled: boolean };
    }
  | { ok: false; error: string };

/** An ESP adapter. Thin: it translates, it never retries. */
export interface Provider {
  /** The provider's id in config (`providers.<id>`). */
  readonly id: string;
  /** `ses`, `sendgrid`, `mailgun` or `smtp`. */
  readonly kind: string;
  /** Whether it sends to the local sandbox rather than the real ESP. */
  readonly sandbox: boolean;
  /**
   * Resolves once it has what it needs to send (a real SES provider's credentials from the
   * AWS chain); rejects with `invalid_config` naming the provider when it cannot. Processes
   * that send wait for it at start and refuse to start without it.
   */
  ready(): Promise<void>;
  send(message: QueuedMessage, context: SendContext): Promise<Outcome>;
  /** How it sends many recipients in one call; absent, it sends one at a time. */
  readonly batch?: BatchSupport;
  /**
   * Checks credentials and reachability once (SES: `GetAccount`). Also opens the
   * connection and loads the SDK's lazy parts, so the first real send is not late.
   */
  check(): Promise<CheckResult>;
  close(): Promise<void>;
}

/** The `Message-ID` header of a message: its id at the sender's domain. */
export function messageIdHeader(message: QueuedMessage): string {
  const domain = message.from.address.slice(message.from.address.lastIndexOf('@') + 1);
  return `<${message.id}@${domain}>`;
}

/** The outcome a classified reply leads to: permanent → rejected, a rate scope → throttled, else deferred. */
export function outcomeFrom(c: Classification, reply: string): Outcome {
  const base = {
    reply,
    family: c.family,
    rule: c.rule,
    version: c.version,
    answered: c.answered,
    ...(c.retryAfterMs !== undefined ? { retryAfterMs: c.retryAfterMs } : {}),
    ...(c.enhanced !== undefined ? { enhanced: c.enhanced } : {}),
  };
  if (c.permanent)
    return { ...base, ...(c.scope !== undefined ? { scope: c.scope } : {}), kind: 'rejected', suppress: c.suppress };
  if (c.scope !== undefined && c.scope !== 'pool') return { ...base, kind: 'throttled', scope: c.scope };
  return { ...base, ...(c.scope !== undefined ? { scope: c.scope } : {}), kind: 'deferred' };
}
