/** What a bucket holds at some instant, for rate-limit headers. */
export interface BucketState {
  /** Capacity: messages accepted at once from idle. */
  limit: number;
  /** Whole tokens left. */
  remaining: number;
  /** Milliseconds until a token is available; `0` when one is. */
  waitMs: number;
}

/**
 * A token bucket: holds up to `burst` tokens, refilled at `rate` per second, full at start.
 * Time is passed in by the caller so the decision is made on the request's arrival time,
 * not on whenever the event loop got round to it.
 */
export class TokenBucket {
  private tokens: number;
  private last: number | undefined;

  constructor(
    private readonly rate: number,
    private readonly burst: number,
  ) {
    this.tokens = burst;
  }

  /** Takes one token at monotonic time `nowMs`; false when the bucket is empty. */
  take(nowMs: number): boolean {
    this.refill(nowMs);
    // A small epsilon so that float drift in the refill does not cost a whole token.
    if (this.tokens >= 1 - 1e-9) {
      this.tokens -= 1;
      return true;
    }
    return false;
  }

  /** The bucket at monotonic time `nowMs`, without taking anything. */
  state(nowMs: number): BucketState {
    this.refill(nowMs);
    const missing = 1 - 1e-9 - this.tokens;
    // A rate of 0 never refills: report "not within a day" rather than Infinity.
    const waitMs = missing <= 0 ? 0 : this.rate > 0 ? (missing * 1000) / this.rate : 86_400_000;
    return { limit: this.burst, remaining: Math.max(0, Math.floor(this.tokens + 1e-9)), waitMs };
  }

  private refill(nowMs: number): void {
    if (this.last !== undefined && nowMs > this.last) {
      this.tokens = Math.min(this.burst, this.tokens + ((nowMs - this.last) * this.rate) / 1000);
    }
    this.last = Math.max(this.last ?? nowMs, nowMs);
  }
}
