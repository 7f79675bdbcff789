import { SluiceError } from '@sluice/core';

/** The deadline of one call, as the steps of the call see it. */
export interface Deadline {
  /** Throws the call's `redis_unavailable` once the deadline has passed: check before each write. */
  check(): void;
}

/** Runs one call against Redis within the client's deadline. */
export type Guard = <T>(what: string, run: (deadline: Deadline) => Promise<T>) => Promise<T>;

/** The error of a call Redis did not serve: a backend retries it (with the same idempotency key). */
export function redisUnavailable(what: string, problem: string, cause?: unknown): SluiceError {
  return new SluiceError(
    'redis_unavailable',
    `${what}: Redis is unavailable (${problem}); retry later: a send may have been written, so retry it with the same idempotencyKey`,
    { action: 'transient', cause },
  );
}

/**
 * Gives each call `timeoutMs`: past it, the call fails with `redis_unavailable` while its
 * command may still be in ioredis's queue (or in a stopped server's socket) and run later.
 * Every failure that is not a `SluiceError` of ours comes from Redis or the queue library
 * under it (input is validated before the first command), so it is `redis_unavailable` too.
 */
export function createGuard(timeoutMs: number): Guard {
  return async (what, run) => {
    let expired: SluiceError | undefined;
    const deadline: Deadline = {
      check() {
        if (expired) throw expired;
      },
    };
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        expired = redisUnavailable(what, `no answer within ${timeoutMs} ms`);
        reject(expired);
      }, timeoutMs);
    });
    const work = run(deadline);
    // The work goes on after a deadline until its command returns or fails: never unhandled.
    work.catch(() => {});
    try {
      return await Promise.race([work, timeout]);
    } catch (error) {
      if (error instanceof SluiceError) throw error;
      throw redisUnavailable(what, error instanceof Error ? error.message : String(error), error);
    } finally {
      clearTimeout(timer);
    }
  };
}
