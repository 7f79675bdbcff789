import type { Redis } from 'ioredis';
import {
  parseCircuitId,
  poolOf,
  receiverFor,
  type Keys,
  type PriorityClass,
  type ReceiverLimit,
  type SluiceConfig,
} from '@sluice/core';
import { storageOf, type LaunchLimit } from '@sluice/store';
import { quotaLayers, type Adjustments } from '@sluice/throttle';
import type { Warmup } from '../control/warmup.js';
import type { Organisations } from '../routing/organisations.js';
import type { ProjectedReceiver, ProjectionInput } from './project.js';

/** An SES account's last reading (`GetAccount`), kept by the scheduler's quota watch. */
export interface AccountQuota {
  max24HourSend: number;
  sentLast24Hours: number;
}

/** What the inputs are read from. */
export interface InputDeps {
  config: SluiceConfig;
  redis: Redis;
  keys: Keys;
  adjustments: Adjustments;
  organisations: Organisations;
  warmup: Pick<Warmup, 'stateOf'>;
  /** The last account reading per provider id. */
  quotas: () => ReadonlyMap<string, AccountQuota>;
}

/** The campaign as the projection needs it. */
export interface LaunchSubject {
  id: string;
  tenantId: string;
  priority: PriorityClass;
  rate: number | undefined;
  burst: number | undefined;
  expiresAt: number | undefined;
  stream: string;
  /** Recipients per domain still to send. */
  domains: Record<string, number>;
}

/** Domains whose receiver is asked of DNS (the largest first); the rest by config or the cache. */
const RESOLVE_TOP = 1000;
const RESOLVE_AT_ONCE = 32;
/**
 * No new MX lookups start after this long (a lookup takes at most `organisations.timeoutMs`):
 * the chore runs before the governor's rules in the leader's tick and must not hold them. What
 * was not asked stands by config or the cache for now; the resolver's cache fills, so a
 * re-check sees more.
 */
const RESOLVE_BUDGET_MS = 2_000;

const round = (x: number): string => (x >= 10 ? x.toFixed(0) : x.toPrecision(3));

/** The share of every bucket a class may use: the critical (and high) reserves are not a lower class's. */
function usableShare(config: SluiceConfig, priority: PriorityClass): number {
  if (priority === 'critical') return 1;
  if (priority === 'high') return 1 - config.reserves.critical;
  return 1 - config.reserves.critical - config.reserves.high;
}

/** Domains grouped by receiving organisation, the largest domains resolved by their MX hosts. */
async function receiversOf(
  deps: InputDeps,
  domains: Record<string, number>,
): Promise<Map<string, { limit: ReceiverLimit; domains: string[]; count: number }>> {
  const sorted = Object.entries(domains).sort((a, b) => b[1] - a[1]);
  const limits = new Map<string, ReceiverLimit>();
  const stopAt = Date.now() + RESOLVE_BUDGET_MS;
  for (let i = 0; i < Math.min(RESOLVE_TOP, sorted.length) && Date.now() < stopAt; i += RESOLVE_AT_ONCE) {
    const batch = sorted.slice(i, Math.min(i + RESOLVE_AT_ONCE, RESOLVE_TOP));
    const got = await Promise.all(batch.map(([d]) => deps.organisations.receiverOf(d)));
    batch.forEach(([d], j) => limits.set(d, got[j]!));
  }
  const out = new Map<string, { limit: ReceiverLimit; domains: string[]; count: number }>();
  for (const [domain, count] of sorted) {
    if (count <= 0) continue;
    const limit = limits.get(domain) ?? deps.organisations.knownReceiverOf(domain) ?? receiverFor(deps.config, domain);
    const entry = out.get(limit.name) ?? { limit, domains: [], count: 0 };
    entry.domains.push(domain);
    entry.count += count;
    out.set(limit.name, entry);
  }
  return out;
}

/** The providers the stream's route sends by, with their shares of its traffic. */
function routeOf(deps: InputDeps, stream: string): { provider: string; share: number }[] {
  const { config, warmup } = deps;
  const all = config.routes[stream] ?? [{ provider: config.defaultProvider, weight: 1 }];
  const open = all.filter((r) => {
    const state = warmup.stateOf(poolOf(config, r.provider));
    return state !== 'draining' && state !== 'retired';
  });
  // Every pool draining or retired: projected as configured (admission holds the mail meanwhile).
  const entries = open.length > 0 ? open : all;
  const weighted = entries.filter((r) => r.weight > 0);
  const used = weighted.length > 0 ? weighted : entries.map((r) => ({ ...r, weight: 1 }));
  const total = used.reduce((n, r) => n + r.weight, 0);
  return used.map((r) => ({ provider: r.provider, share: r.weight / total }));
}

/** The warm-up cap a day of a receiver, when every provider of the route is warming (nothing takes the overflow). */
function warmupLimit(deps: InputDeps, route: { provider: string }[], receiver: string): LaunchLimit | undefined {
  const { config, adjustments, warmup } = deps;
  const pools = route.map((r) => poolOf(config, r.provider));
  if (pools.some((p) => warmup.stateOf(p) !== 'warming')) return undefined;
  let perDay = 0;
  let dayMs = 0;
  for (const pool of new Set(pools)) {
    const plan = config.pools[pool]?.warmup;
    if (!plan) return undefined;
    const step = plan.schedule[Math.min(adjustments.warmup(pool)?.step ?? 0, plan.schedule.length - 1)]!;
    perDay += step[receiver] ?? step['*'] ?? 0;
    dayMs = Math.max(dayMs, plan.dayMs);
  }
  return { limit: 'warmup', key: pools.join('+'), rate: (perDay / dayMs) * 1000, detail: `${perDay} a day (warm-up)` };
}

/** What the steps of {@link readInputs} share. */
interface Step {
  deps: InputDeps;
  subject: LaunchSubject;
  /** The class's usable share of every bucket. */
  usable: number;
  route: { provider: string; share: number }[];
  campaign: { id: string; rate: number | undefined; burst: number | undefined };
  /** ` × 0.250 (lowered)` when a layer key runs below its rate. */
  lowered: (layerKey: string) => string;
}

/** The limits every receiver shares: each provider of the route and its pool, the campaign, the tenant, the daily quota. */
function sharedLimits(step: Step, count: number): LaunchLimit[] {
  const { deps, subject, usable, route, campaign, lowered } = step;
  const { config, keys, adjustments } = deps;
  const shared: LaunchLimit[] = [];
  const add = (limit: LaunchLimit['limit'], key: string, layer: { key: string; rate?: number }, of: number): void => {
    if (layer.rate === undefined) return;
    const part = of < 1 ? `, ${Math.round(of * 100)}% of the route` : '';
    shared.push({
      limit,
      key,
      rate: (layer.rate * usable) / of,
      detail: `${round(layer.rate)}/s${lowered(layer.key)}${part}`,
    });
  };
  for (const { provider, share } of route) {
    const subjectOf = { to: 'x@launch.invalid', tenantId: subject.tenantId, campaign, provider };
    const [p, , pool, c, t] = quotaLayers(config, keys, subjectOf, adjustments).layers;
    add('provider', provider, p, share);
    add('pool', poolOf(config, provider), pool, share);
    if (provider === route[0]!.provider) {
      add('campaign', subject.id, c, 1);
      add('tenant', subject.tenantId, t, 1);
    }
    const q = deps.quotas().get(provider);
    const left = q && q.max24HourSend >= 0 ? q.max24HourSend - q.sentLast24Hours : undefined;
    if (q && left !== undefined && count * share > left) {
      // What is left today goes at once; the rest at Max24HourSend a day.
      const days = (count * share - left) / Math.max(1, q.max24HourSend);
      const detail = `${left} left of Max24HourSend ${q.max24HourSend}`;
      shared.push({ limit: 'quota', key: provider, rate: count / (days * 86_400), detail });
    }
  }
  return shared;
}

/** Receivers with an open circuit on a pool of the route (and the campaign's stream): until when. */
function openCircuitsOf(step: Step, now: number): Map<string, number> {
  const { deps, subject, route } = step;
  const circuits = new Map<string, number>();
  const pools = new Set(route.map((r) => poolOf(deps.config, r.provider)));
  for (const name of deps.adjustments.circuits()) {
    const c = deps.adjustments.circuit(name);
    const id = parseCircuitId(name);
    if (c && now < c.untilMs && pools.has(id.pool) && (id.stream === subject.stream || id.stream === ''))
      circuits.set(id.receiver, Math.max(circuits.get(id.receiver) ?? 0, c.untilMs));
  }
  return circuits;
}

/** Each receiver with its own limits (its layer at the effective rate, a warm-up cap) and its open circuit. */
function receiverLimits(
  step: Step,
  groups: Map<string, { limit: ReceiverLimit; domains: string[]; count: number }>,
  circuits: Map<string, number>,
): ProjectedReceiver[] {
  const { deps, subject, usable, route, campaign, lowered } = step;
  return [...groups].map(([name, g]) => {
    const provider = route[0]!.provider;
    const to = `x@${g.domains[0]}`;
    const r = quotaLayers(
      deps.config,
      deps.keys,
      { to, tenantId: subject.tenantId, campaign, provider, receiver: g.limit },
      deps.adjustments,
    ).layers[1];
    const own: LaunchLimit[] = [];
    if (r.rate !== undefined)
      own.push({
        limit: 'receiver',
        key: name,
        rate: r.rate * usable,
        detail: `${round(g.limit.rate ?? r.rate)}/s${lowered(r.key)}`,
      });
    const w = warmupLimit(deps, route, name);
    if (w) own.push(w);
    const until = circuits.get(name);
    return { receiver: name, domains: g.domains, count: g.count, own, ...(until ? { circuitUntilMs: until } : {}) };
  });
}

/** Age of the last ESP event applied from each provider of the route (null: never heard from). */
async function feedOf(step: Step, now: number): Promise<Record<string, number | null>> {
  const applied = await step.deps.redis.hgetall(step.deps.keys.feedApplied());
  const feed: Record<string, number | null> = {};
  for (const { provider } of step.route)
    feed[provider] = applied[provider] ? Math.max(0, now - Number(applied[provider])) : null;
  return feed;
}

/** Reads everything a launch is decided on (rates in force, circuits, storage, the feed). */
export async function readInputs(
  deps: InputDeps,
  subject: LaunchSubject,
  now: number,
): Promise<Omit<ProjectionInput, 'settings' | 'now' | 'total'>> {
  const { config, adjustments, redis } = deps;
  await adjustments.refresh();
  const step: Step = {
    deps,
    subject,
    usable: usableShare(config, subject.priority),
    route: routeOf(deps, subject.stream),
    campaign: { id: subject.id, rate: subject.rate, burst: subject.burst },
    lowered: (key) => {
      const f = adjustments.factor(key);
      return f < 1 ? ` × ${f.toFixed(3)} (lowered)` : '';
    },
  };
  const groups = await receiversOf(deps, subject.domains);
  const count = [...groups.values()].reduce((n, g) => n + g.count, 0);
  const receivers = receiverLimits(step, groups, openCircuitsOf(step, now));
  const circuitCount = receivers.reduce((n, r) => n + (r.circuitUntilMs ? r.count : 0), 0);
  const paused = step.route.map((r) => adjustments.standing(r.provider));
  const pausedUntilMs = paused.every((s) => s.state === 'paused')
    ? Math.min(...paused.map((s) => (s.state === 'paused' ? s.untilMs : 0)))
    : undefined;
  return {
    receivers,
    shared: sharedLimits(step, count),
    lifetimeMs: config.delivery.lifetimeMs[subject.priority],
    ...(subject.expiresAt !== undefined ? { expiresAt: subject.expiresAt } : {}),
    ...(pausedUntilMs !== undefined ? { pausedUntilMs } : {}),
    checks: {
      storage: await storageOf(redis, config.launch.storage.budgetBytes),
      feed: await feedOf(step, now),
      circuits: {
        share: count > 0 ? circuitCount / count : 0,
        receivers: receivers.filter((r) => r.circuitUntilMs).map((r) => r.receiver),
      },
    },
  };
}
