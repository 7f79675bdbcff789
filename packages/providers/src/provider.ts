import type { QueuedMessage } from '@sluice/core';

/**
 * The one normalised outcome every adapter returns (DESIGN.md, Outcomes).
 * `reply` is the provider's answer verbatim, for the attempt log.
 */
export type Outcome =
  | { kind: 'accepted'; providerMessageId: string; reply: string }
  /** Slow down: retry after `retryAfterMs`, not an attempt failure. */
  | { kind: 'throttled'; retryAfterMs: number; reply: string }
  /** Temporary failure of a family; back off and retry. */
  | { kind: 'deferred'; family: string; reply: string; retryAfterMs?: number }
  /** Permanent: never retried; `suppress` when the recipient itself is bad. */
  | { kind: 'rejected'; family: string; reply: string; suppress: boolean }
  /** The request may have been accepted (connection lost after it was sent). */
  | { kind: 'ambiguous'; reply: string };

/** What the worker hands an adapter with a message. */
export interface SendContext {
  /** The stable `Message-ID` header value, `<id@domain>`: the same on every attempt. */
  messageIdHeader: string;
  /**
   * Called once the request has been written out in full. From then on the ESP may have
   * the message even if the answer never comes back: the worker records it, so a crash
   * after this point is known to be ambiguous and one before it is known to be safe to resend.
   */
  onSubmitted?: () => void;
  signal?: AbortSignal;
}

/** An ESP adapter. Thin: it translates, it never retries. */
export interface Provider {
  /** The provider's id in config (`providers.<id>`). */
  readonly id: string;
  /** Whether it sends to the local sandbox rather than the real ESP. */
  readonly sandbox: boolean;
  send(message: QueuedMessage, context: SendContext): Promise<Outcome>;
  /**
   * Checks credentials and reachability once (SES: `GetAccount`). Also opens the
   * connection and loads the SDK's lazy parts, so the first real send is not late.
   */
  check(): Promise<{ ok: true; detail: string } | { ok: false; error: string }>;
  close(): Promise<void>;
}

/** The `Message-ID` header of a message: its id at the sender's domain. */
export function messageIdHeader(message: QueuedMessage): string {
  const domain = message.from.address.slice(message.from.address.lastIndexOf('@') + 1);
  return `<${message.id}@${domain}>`;
}
