import type { Redis } from 'ioredis';
import type { SluiceClient } from '@sluice/client';
import { PRIORITY_CLASSES, receiverFor, type Keys, type SluiceConfig } from '@sluice/core';
import { createQueues } from '@sluice/store';
import type { OtpLatencySummary } from './otp-latency.js';

/** One sends-per-second figure: the signal key its accepted sends are counted under, and its limit. */
export interface RateColumn {
  label: string;
  /** The workers' signal key (`keys.signals`): a provider, or a receiver bucket. */
  signal: { kind: 'provider' | 'receiver'; name: string };
  /** Per second; undefined when nothing limits it. */
  limit: number | undefined;
}

/** What the status line shows, read from Redis. */
export interface StatusReading {
  /** The epoch second the send counts are of. */
  second: number;
  providers: (RateColumn & { sent: number })[];
  receivers: (RateColumn & { sent: number })[];
  /** Jobs in every intake, campaign and dispatch queue; `delayed` of them are waiting for a time. */
  backlog: { total: number; delayed: number };
  newsletter: { accepted: number; sent: number; rejected: number; suppressed: number };
}

/** Options of {@link createStatusReader}. */
export interface StatusReaderOptions {
  config: SluiceConfig;
  keys: Keys;
  /** A connection of the caller's, for the stats hashes and queue counts; not closed here. */
  redis: Redis;
  client: SluiceClient;
  campaignId: string;
  /** Recipient domains to show a receiver column for. */
  domains: readonly string[];
}

/** Reads the status line's figures. */
export interface StatusReader {
  /** The figures for the last complete second before `now`. */
  read(now?: number): Promise<StatusReading>;
  /** Closes the queues it opened. */
  close(): Promise<void>;
}

/** One column per configured provider, limited by its `rate`. */
export function providerColumns(config: SluiceConfig): RateColumn[] {
  return Object.entries(config.providers).map(([id, p]) => ({
    label: id,
    signal: { kind: 'provider', name: id },
    limit: p.rate,
  }));
}

/**
 * One column per receiver bucket the domains fall in: a policy's name, or the domain
 * (shown without its top-level label) when no policy covers it.
 */
export function receiverColumns(config: SluiceConfig, domains: readonly string[]): RateColumn[] {
  const columns = new Map<string, RateColumn>();
  for (const domain of domains) {
    const receiver = receiverFor(config, domain);
    if (columns.has(receiver.name)) continue;
    const byPolicy = config.receivers.some((p) => p.name === receiver.name);
    const label = byPolicy || !domain.includes('.') ? receiver.name : domain.slice(0, domain.lastIndexOf('.'));
    columns.set(receiver.name, { label, signal: { kind: 'receiver', name: receiver.name }, limit: receiver.rate });
  }
  return [...columns.values()];
}

/** Creates the reader; it opens one BullMQ `Queue` handle per queue it counts, on `redis`. */
export function createStatusReader(options: StatusReaderOptions): StatusReader {
  const { config, keys, redis, client, campaignId } = options;
  const providers = providerColumns(config);
  const receivers = receiverColumns(config, options.domains);
  const handles = createQueues({ redis, keys, partitions: config.redis.dispatchPartitions });
  const queues = [
    ...PRIORITY_CLASSES.map((p) => handles.intake(p)),
    handles.campaign(campaignId),
    ...PRIORITY_CLASSES.flatMap((p) => handles.dispatchAll(p)),
  ];

  async function backlog(): Promise<StatusReading['backlog']> {
    const counts = await Promise.all(queues.map((q) => q.getJobCounts('waiting', 'delayed', 'active', 'prioritized')));
    let total = 0;
    let delayed = 0;
    for (const c of counts) {
      total += (c.waiting ?? 0) + (c.delayed ?? 0) + (c.active ?? 0) + (c.prioritized ?? 0);
      delayed += c.delayed ?? 0;
    }
    return { total, delayed };
  }

  return {
    async read(now = Date.now()) {
      const second = Math.floor(now / 1000) - 1;
      // Accepted sends in the last whole second, from the workers' signal buckets (1 s each).
      const sent = async (c: RateColumn): Promise<RateColumn & { sent: number }> => ({
        ...c,
        sent: Number((await redis.hget(keys.signals(c.signal.kind, c.signal.name, second * 1000), 'accepted')) ?? 0),
      });
      const [providerRates, receiverRates, queued, campaign] = await Promise.all([
        Promise.all(providers.map(sent)),
        Promise.all(receivers.map(sent)),
        backlog(),
        client.campaigns.status(campaignId),
      ]);
      return {
        second,
        providers: providerRates,
        receivers: receiverRates,
        backlog: queued,
        newsletter: {
          accepted: campaign.counts.accepted,
          sent: campaign.counts.sent,
          rejected: campaign.counts.rejected,
          suppressed: campaign.counts.suppressed,
        },
      };
    },
    async close() {
      await handles.close();
    },
  };
}

const ms = (v: number | undefined): string => (v === undefined ? '-' : `${Math.round(v)}ms`);

/**
 * One status line, e.g.
 * `t=12s  ses 49/50/s | gmail 20/20 yahoo 15/15 outlook 6/- | backlog 18230 (delayed 640) | OTP p50 180ms p99 420ms (n=48) | newsletter sent 1710/20000 rejected 3`.
 */
export function formatStatus(elapsedMs: number, reading: StatusReading, otp: OtpLatencySummary): string {
  const n = reading.newsletter;
  const rate = (c: RateColumn & { sent: number }): string =>
    `${c.label} ${String(c.sent).padStart(2)}/${c.limit ?? '-'}`;
  const parts = [
    reading.providers.map((c) => `${rate(c)}/s`).join(' '),
    reading.receivers.map(rate).join(' '),
    `backlog ${String(reading.backlog.total).padStart(5)} (delayed ${reading.backlog.delayed})`,
    `OTP p50 ${ms(otp.p50)} p99 ${ms(otp.p99)} (n=${otp.n}${otp.failed + otp.late > 0 ? `, failed ${otp.failed}, late ${otp.late}` : ''})`,
    `newsletter sent ${n.sent}/${n.accepted} rejected ${n.rejected}${n.suppressed > 0 ? ` suppressed ${n.suppressed}` : ''}`,
  ];
  return `${`t=${Math.floor(elapsedMs / 1000)}s`.padEnd(6)} ${parts.join(' | ')}`;
}
