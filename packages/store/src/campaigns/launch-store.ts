import type { Redis } from 'ioredis';
import { z } from 'zod';
import { SluiceError, normalizeHost, parseInput, type Keys } from '@sluice/core';
import { defineScripts, type StoreRedis } from '../redis/scripts.js';
import { launchSwapResult } from '../redis/results.js';
import type { LaunchForecast, LaunchGate, LaunchRecord, LaunchSummary, StoredGate } from './launch-types.js';

const DOMAIN = /^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)+$/;
const MAX_DOMAINS = 100_000;
/** How often a gate that waits without a time asks again. */
const WAIT_AGAIN_MS = 2_000;

const counts = z
  .record(
    z
      .string()
      .transform((d) => normalizeHost(d))
      .refine((d) => DOMAIN.test(d), { message: 'must be a recipient domain (example.com)' }),
    z.number().int().min(0),
  )
  .refine((r) => Object.keys(r).length <= MAX_DOMAINS, { message: `at most ${MAX_DOMAINS} domains` });

/**
 * What `campaigns.launch` takes: the recipients per domain (`domains`, adding up to `total`),
 * or a `sample` of the list counted per domain, which Sluice scales to `total`.
 */
export const launchForecastSchema = z
  .strictObject({
    total: z.number().int().min(1).max(1_000_000_000),
    domains: counts.optional(),
    sample: counts.optional(),
  })
  .superRefine((f, ctx) => {
    if ((f.domains === undefined) === (f.sample === undefined)) {
      ctx.addIssue({ code: 'custom', path: ['domains'], message: 'give domains (counts) or sample, one of them' });
      return;
    }
    const given = f.domains ?? f.sample!;
    const sum = Object.values(given).reduce((n, c) => n + c, 0);
    if (f.domains !== undefined && sum !== f.total)
      ctx.addIssue({ code: 'custom', path: ['domains'], message: `add up to ${sum}, not total ${f.total}` });
    if (f.sample !== undefined && sum === 0)
      ctx.addIssue({ code: 'custom', path: ['sample'], message: 'counts nobody' });
  });

/** Input of `campaigns.launch`'s forecast. */
export type LaunchForecastInput = z.input<typeof launchForecastSchema>;

/**
 * Validates a forecast (`invalid_argument` naming the field, `forecast.domains`) and scales
 * a sample to its total by the largest remainder, so the counts add up to `total` exactly.
 */
export function parseForecast(input: unknown): LaunchForecast {
  const f = parseInput(launchForecastSchema, input, {
    code: 'invalid_argument',
    what: 'forecast',
    pathPrefix: ['forecast'],
  });
  if (f.domains !== undefined) return { total: f.total, domains: f.domains };
  const sample = f.sample!;
  const sampleTotal = Object.values(sample).reduce((n, c) => n + c, 0);
  const exact = Object.entries(sample).map(([d, c]) => [d, (c * f.total) / sampleTotal] as const);
  const domains: Record<string, number> = {};
  let left = f.total;
  for (const [d, x] of exact) left -= domains[d] = Math.floor(x);
  const byRemainder = [...exact].sort((a, b) => b[1] - Math.floor(b[1]) - (a[1] - Math.floor(a[1])));
  for (let i = 0; left > 0; i = (i + 1) % byRemainder.length, left--) domains[byRemainder[i]![0]]! += 1;
  return { total: f.total, domains, sampleTotal };
}

/** The gate a record stands for (written with it, in one script call). */
export function gateFor(record: LaunchRecord): StoredGate {
  const d = record.decision;
  const stopped: Record<string, string> = {};
  for (const [receiver, s] of Object.entries(record.stopped))
    for (const domain of s.domains) stopped[domain] = `receiver ${receiver} stopped: ${s.reason}`;
  if (!d) return { s: 'wait', reason: 'launch decision pending: no scheduler has decided it yet' };
  if (d.kind === 'reject') return { s: 'refused', reason: `launch rejected (${d.rule}): ${d.reason}` };
  if (d.kind === 'held') return { s: 'wait', ...(d.untilMs ? { untilMs: d.untilMs } : {}), reason: d.reason };
  if (d.approval === 'required')
    return {
      s: 'wait',
      reason: `${d.kind} awaiting an operator's approval (sluice campaigns approve ${record.campaignId}): ${d.reason}`,
    };
  if (d.kind === 'delay') return { s: 'open', waves: [{ atMs: d.untilMs ?? 0, upTo: record.forecast.total }], stopped };
  if (d.waves) return { s: 'open', waves: d.waves.map((w) => ({ atMs: w.atMs, upTo: w.upTo })), stopped };
  return { s: 'open', stopped };
}

/** A launch in short (written with the record, so the status reads a few bytes, not the projections). */
export function launchSummary(record: LaunchRecord): LaunchSummary {
  const d = record.decision;
  const stopped = Object.keys(record.stopped);
  if (!d) return { kind: 'pending', reason: 'no scheduler has decided it yet', stopped };
  return {
    kind: d.kind,
    rule: d.rule,
    reason: d.reason,
    approval: d.approval,
    ...(d.approvedBy ? { approvedBy: d.approvedBy } : {}),
    ...(d.waves ? { waves: d.waves.length } : {}),
    ...(d.untilMs ? { untilMs: d.untilMs } : {}),
    stopped,
  };
}

/** What a stored gate says at `now`. `null`: the campaign was never launched. */
export function readGate(stored: StoredGate | null, now: number): LaunchGate {
  if (stored === null)
    return { state: 'refused', code: 'campaign_not_launched', reason: 'campaign not launched: call campaigns.launch' };
  if (stored.s === 'refused') return { state: 'refused', code: 'campaign_rejected', reason: stored.reason };
  if (stored.s === 'wait')
    return { state: 'wait', untilMs: stored.untilMs ?? now + WAIT_AGAIN_MS, reason: stored.reason };
  const waves = stored.waves ?? [];
  const started = waves.filter((w) => w.atMs <= now).length;
  if (waves.length > 0 && started === 0) {
    const reason = waves.length > 1 ? `wave 1 of ${waves.length} starts then` : 'delayed until then';
    return { state: 'wait', untilMs: waves[0]!.atMs, reason };
  }
  if (started >= waves.length) return { state: 'open', stopped: stored.stopped };
  return {
    state: 'open',
    maxPosition: waves[started - 1]!.upTo,
    nextAtMs: waves[started]!.atMs,
    stopped: stored.stopped,
  };
}

/** A launch as read: the record and the version its next write must name. */
export interface StoredLaunch {
  version: number;
  record: LaunchRecord;
}

/** Reads and writes a campaign's launch hash. */
export interface LaunchStore {
  read(campaignId: string): Promise<StoredLaunch | null>;
  /** The version alone (one HGET; 0: none): a reader that keeps the record reads it again only when this moved. */
  version(campaignId: string): Promise<number>;
  /** Writes record and gate if the version is still `version`; false when someone wrote first. */
  write(campaignId: string, version: number, record: LaunchRecord): Promise<boolean>;
  /** One HGET: the gate at `now`. */
  gate(campaignId: string, now: number): Promise<LaunchGate>;
}

/** The launch hash's reader and writer on one connection. */
export function createLaunchStore(redis: Redis, keys: Keys): LaunchStore {
  const r: StoreRedis = defineScripts(redis);
  return {
    async read(id) {
      const [v, raw] = await r.hmget(keys.launch(id), 'v', 'record');
      if (!raw) return null;
      return { version: Number(v ?? 0), record: JSON.parse(raw) as LaunchRecord };
    },
    async version(id) {
      return Number((await r.hget(keys.launch(id), 'v')) ?? 0);
    },
    async write(id, version, record) {
      const swapped = await r.sluiceLaunchSwap(
        keys.launch(id),
        version,
        JSON.stringify(record),
        JSON.stringify(gateFor(record)),
        JSON.stringify(launchSummary(record)),
      );
      return launchSwapResult(swapped).written;
    },
    async gate(id, now) {
      const raw = await r.hget(keys.launch(id), 'gate');
      return readGate(raw ? (JSON.parse(raw) as StoredGate) : null, now);
    },
  };
}

/** The error of a launch no scheduler decided in time: the request stays stored. */
export function noScheduler(id: string, waitedMs: number): SluiceError {
  return new SluiceError(
    'no_scheduler',
    `campaign ${id}: no scheduler decided the launch within ${waitedMs} ms; the request is stored and is decided once a scheduler runs (see sluice campaigns show ${id})`,
    { action: 'transient', path: 'campaignId' },
  );
}
