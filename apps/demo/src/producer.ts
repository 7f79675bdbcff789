import { randomInt } from 'node:crypto';
import type { SluiceClient } from '@sluice/client';
import { newsletterMessage, newsletterRecipient, otpMessage, randomOtpRecipient } from './recipients.js';

/** Options of {@link createProducer}. */
export interface ProducerOptions {
  client: SluiceClient;
  /** The newsletter's campaign (created by the caller). */
  campaignId: string;
  /** Newsletter recipients. @defaultValue `20_000` */
  recipients?: number;
  /** Messages per `sendBulk` call. @defaultValue `1_000` */
  chunkSize?: number;
  /** One OTP every this many milliseconds. @defaultValue `250` */
  otpIntervalMs?: number;
  /** How long an OTP stays valid. @defaultValue `300_000` */
  otpLifetimeMs?: number;
  /** Called for each OTP accepted, with the time just before `send()` was called. */
  onOtp(id: string, sentAt: number): void;
  /** Called when an OTP could not be enqueued; the trickle goes on. */
  onOtpError(error: unknown): void;
}

/** Enqueues the demo's mail: one big newsletter and a steady trickle of OTPs. */
export interface Producer {
  /**
   * Enqueues the newsletter in chunks; resolves with the number enqueued, which is less
   * than asked for if `close()` came first. Rejects if a chunk fails.
   */
  enqueueNewsletter(): Promise<number>;
  /** Starts the OTP trickle; it runs until `close()`. */
  startOtps(): void;
  /** Stops producing and waits for the calls in flight. */
  close(): Promise<void>;
}

/** Creates the demo's producer. */
export function createProducer(options: ProducerOptions): Producer {
  const { client, campaignId } = options;
  const total = options.recipients ?? 20_000;
  const chunkSize = options.chunkSize ?? 1_000;
  const otpLifetimeMs = options.otpLifetimeMs ?? 300_000;
  const inFlight = new Set<Promise<unknown>>();
  let timer: NodeJS.Timeout | undefined;
  let closed = false;

  function track<T>(promise: Promise<T>): Promise<T> {
    inFlight.add(promise);
    const forget = (): void => void inFlight.delete(promise);
    void promise.then(forget, forget);
    return promise;
  }

  async function sendOtp(): Promise<void> {
    const sentAt = Date.now();
    const code = String(randomInt(1_000_000)).padStart(6, '0');
    const { id } = await client.send(otpMessage(randomOtpRecipient(), code, sentAt + otpLifetimeMs));
    options.onOtp(id, sentAt);
  }

  async function enqueue(): Promise<number> {
    let done = 0;
    while (done < total && !closed) {
      const size = Math.min(chunkSize, total - done);
      const chunk = Array.from({ length: size }, (_, k) =>
        newsletterMessage(newsletterRecipient(done + k), campaignId),
      );
      await client.sendBulk(chunk);
      done += size;
    }
    return done;
  }

  return {
    enqueueNewsletter: () => track(enqueue()),
    startOtps() {
      if (closed || timer) return;
      timer = setInterval(() => {
        track(sendOtp()).catch((error: unknown) => options.onOtpError(error));
      }, options.otpIntervalMs ?? 250);
    },
    async close() {
      closed = true;
      clearInterval(timer);
      await Promise.allSettled([...inFlight]);
    },
  };
}
