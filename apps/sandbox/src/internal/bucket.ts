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
    if (this.last !== undefined && nowMs > this.last) {
      this.tokens = Math.min(this.burst, this.tokens + ((nowMs - this.last) * this.rate) / 1000);
    }
    this.last = Math.max(this.last ?? nowMs, nowMs);
    // A small epsilon so that float drift in the refill does not cost a whole token.
    if (this.tokens >= 1 - 1e-9) {
      this.tokens -= 1;
      return true;
    }
    return false;
  }
}
