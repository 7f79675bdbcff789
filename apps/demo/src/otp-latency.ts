import type { Messages } from '@sluice/client';
import { isFinalState } from '@sluice/core';

/** Options of {@link createOtpLatency}. */
export interface OtpLatencyOptions {
  /** Where message records are read: `client.messages`. */
  messages: Messages;
  /** Percentiles cover OTPs sent within this window. @defaultValue `30_000` */
  windowMs?: number;
  /** How often pending OTPs are looked up, all at once. @defaultValue `250` */
  pollMs?: number;
  /** An OTP not final after this long is no longer waited for (counted as `late`). @defaultValue `60_000` */
  giveUpMs?: number;
}

/** OTP latencies over the window: send() to sent, in milliseconds. */
export interface OtpLatencySummary {
  /** OTPs sent within the window. */
  n: number;
  p50: number | undefined;
  p99: number | undefined;
  /** OTPs not final yet. */
  pending: number;
  /** OTPs that ended in another final state (rejected, expired…) since start. */
  failed: number;
  /** OTPs given up on after `giveUpMs`, since start. */
  late: number;
}

/** Follows OTPs from `send()` to `sent`. */
export interface OtpLatency {
  /** Follows one OTP; `sentAt` is when `send()` was called. */
  track(id: string, sentAt: number): void;
  summary(now?: number): OtpLatencySummary;
  /** Stops polling and waits for a poll in flight. */
  close(): Promise<void>;
}

/** The nearest-rank percentile of ascending `sorted`; undefined when empty. */
export function percentile(sorted: readonly number[], p: number): number | undefined {
  if (sorted.length === 0) return undefined;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1];
}

/**
 * Creates the OTP latency tracker. It polls `messages.status` for every pending OTP,
 * batched, and takes a sent OTP's latency from its record's `finalAt`, so the figure does
 * not depend on how often it polls.
 */
export function createOtpLatency(options: OtpLatencyOptions): OtpLatency {
  const { messages } = options;
  const windowMs = options.windowMs ?? 30_000;
  const giveUpMs = options.giveUpMs ?? 60_000;
  const pending = new Map<string, number>();
  let samples: { at: number; ms: number }[] = [];
  let failed = 0;
  let late = 0;
  let closed = false;
  let polling: Promise<void> = Promise.resolve();
  let timer: NodeJS.Timeout | undefined;

  async function poll(): Promise<void> {
    const now = Date.now();
    const ids = [...pending.keys()];
    const records = await Promise.all(ids.map((id) => messages.status(id)));
    ids.forEach((id, i) => {
      const sentAt = pending.get(id)!;
      const record = records[i];
      if (record?.state === 'sent' && record.finalAt !== undefined) {
        samples.push({ at: sentAt, ms: record.finalAt - sentAt });
        pending.delete(id);
      } else if (record && isFinalState(record.state)) {
        failed++;
        pending.delete(id);
      } else if (now - sentAt > giveUpMs) {
        late++;
        pending.delete(id);
      }
    });
  }

  function schedule(): void {
    if (closed) return;
    timer = setTimeout(() => {
      // A failed poll (Redis briefly away) is simply tried again on the next tick.
      polling = poll()
        .catch(() => undefined)
        .finally(schedule);
    }, options.pollMs ?? 250);
  }
  schedule();

  return {
    track(id, sentAt) {
      if (!closed) pending.set(id, sentAt);
    },
    summary(now = Date.now()) {
      samples = samples.filter((s) => now - s.at <= windowMs);
      const sorted = samples.map((s) => s.ms).sort((a, b) => a - b);
      return {
        n: sorted.length,
        p50: percentile(sorted, 50),
        p99: percentile(sorted, 99),
        pending: pending.size,
        failed,
        late,
      };
    },
    async close() {
      closed = true;
      clearTimeout(timer);
      await polling;
    },
  };
}
