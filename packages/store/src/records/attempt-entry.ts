/**
 * One send attempt as the attempt log keeps it. Every attempt that was not accepted at
 * once is logged; an accepted first attempt is only in the record (state `sent`, provider
 * message id), which keeps a sent campaign's memory at one small hash per recipient.
 */
export interface AttemptEntry {
  /** Epoch ms when the answer came (or its absence was found). */
  at: number;
  provider: string;
  /**
   * `accepted`, `throttled`, `deferred`, `rejected` or `ambiguous` (submitted in full, no
   * answer: the connection was lost or timed out after the request or the SMTP data, or
   * its worker died after the mark; {@link AttemptEntry.foundSubmitted}).
   */
  outcome: string;
  /** The reply verbatim (cut at 2,000 characters). */
  reply: string;
  /** Reply family, classifier rule and version (absent for accepted and ambiguous). */
  family?: string;
  rule?: string;
  classifier?: string;
  /**
   * An ambiguous attempt whose worker died after submitting it, before the answer: the
   * next attempt found the record `submitted`. `at` is when that was found.
   */
  foundSubmitted?: true;
  /** What was done: `retry in 1200 ms`, `final: rejected`, `resent now (…)`, `final: counted as sent (…)`, … */
  action?: string;
}
