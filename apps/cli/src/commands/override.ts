import { LAYER_KINDS, type LayerKind } from '@sluice/core';
import type { AuditEntry, Override, OverrideKind, Overrides } from '@sluice/ops';
import {
  ACTOR_OPTION,
  JSON_OPTION,
  UsageError,
  actorOf,
  parseCount,
  parseDuration,
  parseFutureTime,
  parsePositive,
  requireText,
} from '../args.js';
import type { Command, Context } from '../context.js';
import { json, rate, table, when } from '../format.js';

/** Loaded on use, so `--help` and usage errors stay quick. */
async function overrides(ctx: Context): Promise<Overrides> {
  const { createOverrides } = await import('@sluice/ops');
  const d = await ctx.deps();
  return createOverrides({ ...d, redis: d.control });
}

const SCOPE_HELP = `${LAYER_KINDS.join(' | ')}`;

function scopeOf(value: string | undefined, command: string): LayerKind {
  if (!(LAYER_KINDS as readonly string[]).includes(value ?? '')) {
    throw new UsageError(`<scope> must be one of ${LAYER_KINDS.join(', ')}, got ${JSON.stringify(value)}`, command);
  }
  return value as LayerKind;
}

function describe(o: Override): string {
  return o.kind === 'rate' ? `rate ${rate(o.rate)}` : o.kind;
}

function overrideRows(list: readonly Override[], now: number): (string | undefined)[][] {
  return list.map((o) => [o.scope, o.name, o.kind, rate(o.rate), when(o.untilMs, now), o.actor, o.reason]);
}

/** The overrides table, shared with `status`. */
export function overridesTable(list: readonly Override[], now: number): string {
  return table(['scope', 'name', 'kind', 'rate', 'until', 'actor', 'reason'], overrideRows(list, now));
}

const set: Command = {
  path: ['override', 'set'],
  usage:
    '<scope> <name> (--pause | --suspend | --rate <n>) (--for <duration> | --until <time>) --reason <text> [--actor <name>] [--json]',
  summary: 'pause, suspend or re-rate one quota key for a while',
  description: [
    'Every override ends by itself: --for or --until is required, and nothing is written without one.',
    '  --pause    nothing new is admitted through the key; admitted mail still goes',
    '  --suspend  as --pause, and admitted mail is not sent either (it waits for admission)',
    "  --rate     the key's configured rate is replaced (governor and backpressure factors still apply)",
    'Each set is recorded in the audit trail with its actor and reason (sluice override audit).',
    '',
    'Examples:',
    '  sluice override set receiver google --rate 5 --for 30m --reason "421s from Gmail, ticket OPS-12"',
    '  sluice override set provider ses --suspend --until 2026-12-01T09:00:00Z --reason "SES review"',
  ],
  args: [
    { name: 'scope', help: SCOPE_HELP },
    { name: 'name', help: 'the key within the scope: a provider id, receiver name, pool, campaign id or tenant' },
  ],
  options: {
    pause: { type: 'boolean', help: 'admit nothing new through the key' },
    suspend: { type: 'boolean', help: 'admit nothing and send nothing through the key' },
    rate: { type: 'string', value: '<n>', help: 'messages per second instead of the configured rate' },
    for: { type: 'string', value: '<duration>', help: 'how long it lasts: 90s, 10m, 2h, 1d' },
    until: { type: 'string', value: '<time>', help: 'when it ends: an ISO 8601 time in the future' },
    reason: { type: 'string', value: '<text>', help: 'why (required; kept in the audit trail)' },
    ...ACTOR_OPTION,
    ...JSON_OPTION,
  },
  async run(ctx, { values, args }) {
    const cmd = 'override set';
    const scope = scopeOf(args.scope, cmd);
    const name = args.name!;
    const kinds = (['pause', 'suspend', 'rate'] as const).filter((k) => values[k] !== undefined);
    if (kinds.length !== 1)
      throw new UsageError(
        kinds.length === 0
          ? 'one of --pause, --suspend or --rate <n> is required'
          : `--${kinds.join(' and --')} cannot be combined: give one`,
        cmd,
      );
    const kind: OverrideKind = kinds[0]!;
    const rateValue = kind === 'rate' ? parsePositive(values.rate as string, 'rate', cmd) : undefined;
    if (values.for === undefined && values.until === undefined)
      throw new UsageError('--for <duration> or --until <time> is required: every override must end by itself', cmd);
    if (values.for !== undefined && values.until !== undefined)
      throw new UsageError('--for and --until cannot be combined: give one', cmd);
    const now = ctx.io.now();
    const forMs = values.for !== undefined ? parseDuration(values.for as string, 'for', cmd) : undefined;
    const untilMs = values.until !== undefined ? parseFutureTime(values.until as string, 'until', cmd, now) : undefined;
    const reason = requireText(values.reason, 'reason', cmd);
    const actor = actorOf(values.actor, ctx.io.env, cmd);

    const o = await (
      await overrides(ctx)
    ).set({
      scope,
      name,
      kind,
      ...(rateValue !== undefined ? { rate: rateValue } : {}),
      ...(forMs !== undefined ? { forMs } : {}),
      ...(untilMs !== undefined ? { untilMs } : {}),
      actor,
      reason,
    });
    ctx.print(
      ctx.json
        ? json(o)
        : `${o.scope} ${o.name}: ${describe(o)} until ${when(o.untilMs, ctx.io.now())}, set by ${o.actor}: ${o.reason}`,
    );
    return 0;
  },
};

const list: Command = {
  path: ['override', 'list'],
  usage: '[--json]',
  summary: 'the overrides in force',
  args: [],
  options: { ...JSON_OPTION },
  async run(ctx) {
    const all = await (await overrides(ctx)).list();
    ctx.print(ctx.json ? json(all) : overridesTable(all, ctx.io.now()));
    return 0;
  },
};

const clear: Command = {
  path: ['override', 'clear'],
  usage: '<scope> <name> --reason <text> [--actor <name>] [--json]',
  summary: 'end an override before its time',
  description: [
    'Recorded in the audit trail. Clearing a key that has no override changes nothing and says so.',
    '',
    'Example:',
    '  sluice override clear receiver google --reason "Gmail recovered"',
  ],
  args: [
    { name: 'scope', help: SCOPE_HELP },
    { name: 'name', help: 'the key within the scope' },
  ],
  options: {
    reason: { type: 'string', value: '<text>', help: 'why (required; kept in the audit trail)' },
    ...ACTOR_OPTION,
    ...JSON_OPTION,
  },
  async run(ctx, { values, args }) {
    const cmd = 'override clear';
    const scope = scopeOf(args.scope, cmd);
    const name = args.name!;
    const reason = requireText(values.reason, 'reason', cmd);
    const actor = actorOf(values.actor, ctx.io.env, cmd);
    const cleared = await (await overrides(ctx)).clear(scope, name, actor, reason);
    ctx.print(
      ctx.json
        ? json({ scope, name, cleared })
        : cleared
          ? `${scope} ${name}: override cleared`
          : `${scope} ${name}: no override in force, nothing changed`,
    );
    return 0;
  },
};

const audit: Command = {
  path: ['override', 'audit'],
  usage: '[--count <n>] [--json]',
  summary: 'the audit trail: who set, cleared or let expire which override, and why',
  args: [],
  options: {
    count: { type: 'string', value: '<n>', help: 'how many entries (default 100, at most 10000)' },
    ...JSON_OPTION,
  },
  async run(ctx, { values }) {
    const count =
      values.count === undefined ? 100 : parseCount(values.count as string, 'count', 'override audit', 10_000);
    const entries: AuditEntry[] = await (await overrides(ctx)).audit(count);
    const now = ctx.io.now();
    ctx.print(
      ctx.json
        ? json(entries)
        : table(
            ['at', 'action', 'scope', 'name', 'kind', 'rate', 'until', 'actor', 'reason'],
            entries.map((e) => [
              new Date(e.at).toISOString(),
              e.action,
              e.scope,
              e.name,
              e.kind,
              rate(e.rate),
              when(e.untilMs, now),
              e.actor,
              e.reason,
            ]),
          ),
    );
    return 0;
  },
};

/** `sluice override …` */
export const overrideCommands: readonly Command[] = [set, list, clear, audit];
