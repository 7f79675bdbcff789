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
import type { FillingBatches, Queues } from '@sluice/store';

/**
 * The scheduler's batches (docs/design/batches.md): admitted campaign recipients of the normal and
 * low classes, for a provider whose adapter sends batches, grouped by campaign, provider, class and
 * message home, and their slots in one window of `batches.spreadMs`; written as one dispatch job
 * when full, or when it is due: after `batches.fillMs`, or later while its earliest slot is
 * further ahead than a worker needs to take it (`LEAD_MS`), so mail booked ahead fills its batch
 * without waiting past its slot. A recipient's admission ends only once it cannot be lost: its
 * batch written, or (a batch due later than `fillMs` from now) its data in the batch's list in
 * Redis, which a sweep writes as a job if its scheduler never does. So an intake job is never
 * completed before its recipient is in Redis, and no admission holds its job longer than `fillMs`.
 */
export interface Batcher {
  /** Whether an admitted message goes in a batch: campaign mail of a class that may wait, to a provider that batches. */
  takes(m: Pick<DispatchJobData, 'campaignId' | 'priority' | 'provider'>): boolean;
  /** Adds an admitted recipient; resolves once its batch is in its dispatch queue, or it is in its batch's list in Redis. */
  add(data: DispatchJobData): Promise<void>;
  /**
   * Writes the batches in Redis whose job is `worker.lockDurationMs` past due and not written
   * (their scheduler died, or Redis refused the job), as the jobs they would have been; resolves
   * to how many recipients it wrote.
   */
  sweep(): Promise<number>;
  /** Writes every batch being filled now. */
  flush(): Promise<void>;
}

/** Options of {@link createBatcher}. */
export interface BatcherOptions {
  config: SluiceConfig;
  queues: Pick<Queues, 'dispatchOf'>;
  /** Where batches due later are kept (the queues' Redis). */
  filling: FillingBatches;
  /** This scheduler's name: its batches' ids begin with it. */
  holder: string;
  /** @defaultValue `systemClock` */
  clock?: Clock;
}

/** How long before its earliest slot a batch is written at the latest: a worker's fetch and its checks. */
const LEAD_MS = 50;

/** An admission waiting to be told its recipient cannot be lost. */
interface Waiter {
  resolve: () => void;
  reject: (e: unknown) => void;
}

/** One batch being filled. */
interface Filling {
  /** Its id in Redis (`<holder>.<n>`), and its recipients' home. */
  id: string;
  home: number;
  data: DispatchJobData[];
  /** Admissions told once the job is written. */
  waiting: Waiter[];
  /** Recipients to put in Redis at the end of this turn of the event loop, with their admissions. */
  toPut: { data: DispatchJobData; waiter: Waiter }[];
  /** Every put so far, settled (a failed put's recipients have left `data`). */
  puts: Promise<void>;
  /** Whether Redis holds a list of it (dropped once the job is written). */
  kept: boolean;
  /** When it began to fill (epoch ms). */
  since: number;
  timer: NodeJS.Timeout | undefined;
}

/** Creates a scheduler's batcher; `flush` it before the scheduler closes. */
export function createBatcher(options: BatcherOptions): Batcher {
  const { config, queues, filling: kept, holder } = options;
  const clock = options.clock ?? systemClock;
  const settings = config.batches;
  const filling = new Map<string, Filling>();
  /** This scheduler's batches not yet written (a sweep leaves them to it). */
  const live = new Set<string>();
  let made = 0;

  function sizeOf(provider: string): number {
    const p = config.providers[provider];
    const limit = p === undefined ? undefined : batchLimitOf(p);
    return limit === undefined ? 0 : Math.min(limit, settings.maxSize);
  }

  /** Adds a batch's job at its earliest slot (a batch of one goes as the message's own job). */
  async function addJob(data: DispatchJobData[]): Promise<void> {
    const first = data[0]!;
    const delay = Math.max(0, Math.min(...data.map((d) => d.admittedAt)) - clock());
    if (data.length === 1) await queues.dispatchOf(first).add('send', first, { jobId: jobIdOf(first), delay });
    else await queues.dispatchOf(first).add(BATCH_JOB, { batch: data }, { jobId: batchJobIdOf(data), delay });
  }

  /** Writes one batch as it is, tells the admissions that waited for it, then drops its list. */
  async function write(key: string, batch: Filling): Promise<void> {
    if (filling.get(key) === batch) filling.delete(key);
    clearTimeout(batch.timer);
    // Recipients not put in Redis yet go with the job, their admissions told when it is written.
    for (const { waiter } of batch.toPut.splice(0)) batch.waiting.push(waiter);
    await batch.puts;
    try {
      if (batch.data.length > 0) await addJob(batch.data);
      for (const w of batch.waiting) w.resolve();
      // Not dropped (Redis refused): a sweep writes its list again `worker.lockDurationMs` past
      // due, long after this job ran: its worker finds those records final and sends none.
      if (batch.kept) await kept.drop(batch.home, batch.id).catch(() => undefined);
    } catch (error) {
      // Their admissions run again; the kept recipients stay in Redis for a sweep.
      for (const w of batch.waiting) w.reject(error);
    } finally {
      live.delete(batch.id);
    }
  }

  /** When a batch is written: `fillMs` after it began, or later while its earliest slot is far. */
  function dueOf(batch: Filling): number {
    const earliest = Math.min(...batch.data.map((d) => d.admittedAt));
    return Math.max(batch.since + settings.fillMs, earliest - LEAD_MS);
  }

  /** Puts the recipients added this turn in the batch's list in Redis, then tells their admissions. */
  function put(batch: Filling): void {
    const group = batch.toPut.splice(0);
    if (group.length === 0) return; // written meanwhile
    batch.kept = true;
    const stored = kept.put(
      batch.home,
      batch.id,
      dueOf(batch),
      group.map((g) => g.data),
    );
    const told = stored.then(
      () => {
        for (const g of group) g.waiter.resolve();
      },
      (error: unknown) => {
        // Not kept: out of the batch, their admissions run again.
        batch.data = batch.data.filter((d) => !group.some((g) => g.data === d));
        for (const g of group) g.waiter.reject(error);
      },
    );
    batch.puts = batch.puts.then(() => told);
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
      const home = homeOf(data.id);
      const key = `${data.campaignId ?? ''}|${data.provider}|${data.priority}|${home}|${window}|${domain}`;
      let batch = filling.get(key);
      if (!batch) {
        const id = `${holder}.${(made++).toString(36)}`;
        const fresh = { data: [], waiting: [], toPut: [], puts: Promise.resolve(), kept: false, timer: undefined };
        batch = { ...fresh, id, home, since: clock() };
        filling.set(key, batch);
        live.add(id);
      }
      const b = batch;
      b.data.push(data);
      const full = b.data.length >= sizeOf(data.provider);
      const at = dueOf(b);
      const told = new Promise<void>((resolve, reject) => {
        const waiter = { resolve, reject };
        // Written soon: its admission waits for the job. Due later: its admission ends once it is in Redis.
        if (full || at - clock() <= settings.fillMs) b.waiting.push(waiter);
        else {
          if (b.toPut.length === 0) setImmediate(() => put(b));
          b.toPut.push({ data, waiter });
        }
      });
      clearTimeout(b.timer);
      if (full) void write(key, b);
      else b.timer = setTimeout(() => void write(key, b), Math.max(0, at - clock()));
      return told;
    },
    async sweep() {
      let wrote = 0;
      for (const batch of await kept.overdue(clock() - config.worker.lockDurationMs)) {
        if (live.has(batch.id)) continue;
        await addJob(batch.entries);
        await kept.drop(batch.home, batch.id);
        wrote += batch.entries.length;
      }
      return wrote;
    },
    async flush() {
      await Promise.all([...filling].map(([key, batch]) => write(key, batch)));
    },
  };
}
