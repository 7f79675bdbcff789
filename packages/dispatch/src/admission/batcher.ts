import {
  BATCH_JOB,
  batchJobIdOf,
  homeOf,
  jobIdOf,
  recipientDomain,
  systemClock,
  type Clock,
  type DispatchJobData,
  type SluiceConfig,
} from '@sluice/core';
import { batchLimitOf } from '@sluice/providers';
import type { Queues } from '@sluice/store';

/**
 * The scheduler's batches (docs/design/batches.md): admitted campaign recipients of the normal and
 * low classes, for a provider whose adapter sends batches, grouped by campaign, provider, class and
 * message home, and their slots in one window of `batches.spreadMs`; written as one dispatch job
 * when full, or when it is due: after `batches.fillMs`, or later while its earliest slot is
 * further ahead than a worker needs to take it (`LEAD_MS`), so mail booked ahead fills its batch
 * without waiting past its slot. A recipient's admission ends only once its batch is written, so its intake job is
 * never completed before its dispatch job exists.
 */
export interface Batcher {
  /** Whether an admitted message goes in a batch: campaign mail of a class that may wait, to a provider that batches. */
  takes(m: Pick<DispatchJobData, 'campaignId' | 'priority' | 'provider'>): boolean;
  /** Adds an admitted recipient; resolves once the batch that holds it is in its dispatch queue. */
  add(data: DispatchJobData): Promise<void>;
  /** Writes every batch being filled now. */
  flush(): Promise<void>;
}

/** Options of {@link createBatcher}. */
export interface BatcherOptions {
  config: SluiceConfig;
  queues: Pick<Queues, 'dispatchOf'>;
  /** @defaultValue `systemClock` */
  clock?: Clock;
}

/** How long before its earliest slot a batch is written at the latest: a worker's fetch and its checks. */
const LEAD_MS = 50;

/** One batch being filled, and the admissions waiting for it to be written. */
interface Filling {
  data: DispatchJobData[];
  waiting: { resolve: () => void; reject: (e: unknown) => void }[];
  /** When it began to fill (epoch ms). */
  since: number;
  timer: NodeJS.Timeout | undefined;
}

/** Creates a scheduler's batcher; `flush` it before the scheduler closes. */
export function createBatcher(options: BatcherOptions): Batcher {
  const { config, queues } = options;
  const clock = options.clock ?? systemClock;
  const settings = config.batches;
  const filling = new Map<string, Filling>();

  function sizeOf(provider: string): number {
    const p = config.providers[provider];
    const limit = p === undefined ? undefined : batchLimitOf(p);
    return limit === undefined ? 0 : Math.min(limit, settings.maxSize);
  }

  /** Writes one batch as it is (a batch of one goes as the message's own job), then tells its admissions. */
  async function write(key: string, batch: Filling): Promise<void> {
    if (filling.get(key) === batch) filling.delete(key);
    clearTimeout(batch.timer);
    const first = batch.data[0]!;
    // It goes at its earliest slot.
    const delay = Math.max(0, Math.min(...batch.data.map((d) => d.admittedAt)) - clock());
    try {
      if (batch.data.length === 1) {
        await queues.dispatchOf(first).add('send', first, { jobId: jobIdOf(first), delay });
      } else {
        await queues
          .dispatchOf(first)
          .add(BATCH_JOB, { batch: batch.data }, { jobId: batchJobIdOf(batch.data), delay });
      }
      for (const w of batch.waiting) w.resolve();
    } catch (error) {
      for (const w of batch.waiting) w.reject(error);
    }
  }

  /** (Re)sets when a batch being filled is written: `fillMs` after it began, or later while its earliest slot is far. */
  function due(key: string, batch: Filling): void {
    const earliest = Math.min(...batch.data.map((d) => d.admittedAt));
    const at = Math.max(batch.since + settings.fillMs, earliest - LEAD_MS);
    clearTimeout(batch.timer);
    batch.timer = setTimeout(() => void write(key, batch), Math.max(0, at - clock()));
  }

  return {
    takes(m) {
      return (
        settings.enabled &&
        m.campaignId !== undefined &&
        (m.priority === 'normal' || m.priority === 'low') &&
        sizeOf(m.provider) > 1
      );
    },
    add(data) {
      // Slots in one window of `spreadMs` share a batch, whatever order they were admitted in.
      const window = settings.spreadMs > 0 ? Math.floor(data.admittedAt / settings.spreadMs) : data.admittedAt;
      // SMTP carries one receiving domain a transaction.
      const domain = config.providers[data.provider]?.kind === 'smtp' ? recipientDomain(data.to) : '';
      const key = `${data.campaignId ?? ''}|${data.provider}|${data.priority}|${homeOf(data.id)}|${window}|${domain}`;
      let batch = filling.get(key);
      if (!batch) {
        batch = { data: [], waiting: [], since: clock(), timer: undefined };
        filling.set(key, batch);
      }
      const written = new Promise<void>((resolve, reject) => batch.waiting.push({ resolve, reject }));
      batch.data.push(data);
      if (batch.data.length >= sizeOf(data.provider)) void write(key, batch);
      else due(key, batch);
      return written;
    },
    async flush() {
      await Promise.all([...filling].map(([key, batch]) => write(key, batch)));
    },
  };
}
