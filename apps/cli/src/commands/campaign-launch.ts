import { readFile } from 'node:fs/promises';
import type { CampaignStatus, LaunchRecord } from '@sluice/client';
import { SluiceError } from '@sluice/core';
import { JSON_OPTION, actorOf, parseDuration, requireText } from '../args.js';
import type { Command, Context } from '../context.js';
import { duration, fields, json, rate, table, when } from '../format.js';

const ID = [{ name: 'id', help: 'the campaign id' }] as const;

/** The launch of a campaign as `campaigns show`, `launch` and `approve` print it. */
export function launchText(launch: LaunchRecord | null, now: number): string {
  if (!launch) return 'Launch\n(not launched: sluice campaigns launch <id> <forecast.json>)';
  const d = launch.decision;
  const head: [string, string | number | undefined][] = [
    [
      'forecast',
      `${launch.forecast.total} recipients, ${Object.keys(launch.forecast.domains).length} domains${launch.forecast.sampleTotal ? ` (scaled from a sample of ${launch.forecast.sampleTotal})` : ''}`,
    ],
    ['requested', `${when(launch.requestedAt, now)} by ${launch.requestedBy}, stream ${launch.stream}`],
  ];
  if (!d) return ['Launch', fields([...head, ['decision', 'pending: no scheduler has decided it yet']])].join('\n');
  head.push(
    ['decision', `${d.kind} (${d.rule})`],
    ['reason', d.reason],
    ['decided', `${when(d.decidedAt, now)} by ${d.decidedBy}`],
    [
      'approval',
      d.approval === 'approved'
        ? `approved by ${d.approvedBy} ${when(d.approvedAt, now)}: ${d.approvalReason}`
        : d.approval,
    ],
    ['until', when(d.untilMs, now)],
    ['deadline', when(d.deadline, now)],
    ['shared limit', `${d.shared.limit} ${d.shared.key}: ${d.shared.detail}`],
    [
      'storage',
      `${(d.checks.storage.share * 100).toFixed(1)}% of ${d.checks.storage.source} (${Math.round(d.checks.storage.usedBytes / 1e6)} MB of ${Math.round(d.checks.storage.budgetBytes / 1e6)} MB)`,
    ],
    [
      'feed',
      Object.entries(d.checks.feed)
        .map(([p, age]) => `${p} ${age === null ? 'never heard from' : `${duration(age)} ago`}`)
        .join(', '),
    ],
  );
  const out = ['Launch', fields(head)];
  if (d.waves)
    out.push(
      '\nWaves',
      table(
        ['wave', 'starts', 'count', 'up to'],
        d.waves.map((w, i) => [i + 1, when(w.atMs, now), w.count, w.upTo]),
      ),
    );
  out.push(
    `\nReceivers (${d.receiverCount})`,
    table(
      ['receiver', 'count', 'rate', 'bound by', 'finishes', 'late'],
      d.receivers.map((r) => [
        r.receiver,
        r.count,
        rate(r.rate),
        `${r.binds.limit} ${r.binds.key}: ${r.binds.detail}`,
        when(r.finishAt, now),
        r.late ? 'LATE' : '',
      ]),
    ),
  );
  const stopped = Object.entries(launch.stopped);
  if (stopped.length > 0)
    out.push(
      '\nStopped',
      table(
        ['receiver', 'at', 'domains', 'why'],
        stopped.map(([name, s]) => [name, when(s.at, now), s.domains.join(' '), s.reason]),
      ),
    );
  return out.join('\n');
}

function statusText(s: CampaignStatus, now: number): string {
  const state = s.archive
    ? `archived ${new Date(s.archive.at).toISOString()} by ${s.archive.by}${s.cancelled ? ' (cancelled)' : ''}`
    : s.cancelled
      ? 'cancelled'
      : s.paused
        ? 'paused'
        : 'active';
  const content = s.archive?.content;
  return [
    fields([
      ['campaign', s.name === s.id ? s.id : `${s.id} (${s.name})`],
      ['state', state],
      ...(content
        ? [
            [
              'content',
              `from ${content.from}, ${content.template ? `template ${content.template}` : `subject ${content.subject ?? ''}`}`,
            ] as [string, string],
          ]
        : []),
      ['priority', s.priority],
      ['accepted', s.counts.accepted],
      ['sent', s.counts.sent],
      ['pending', s.pending],
      ['queue', `${s.queue.waiting} waiting, ${s.queue.delayed} delayed, ${s.queue.active} active`],
      ['cursor', s.cursor.value === undefined ? s.cursor.position : `${s.cursor.position} (yours: ${s.cursor.value})`],
      [
        'window',
        `${s.window.pending} not final of ${s.window.max}, ${s.window.waiting} waiting of ${s.window.ready} ready, at ${s.window.rate}/s`,
      ],
    ]),
    '',
    launchText(s.launch, now),
  ].join('\n');
}

const show: Command = {
  path: ['campaigns', 'show'],
  usage: '<id> [--json]',
  summary: "a campaign's state, counts and launch decision (projections per receiver, waves, stops)",
  args: ID,
  options: { ...JSON_OPTION },
  async run(ctx, { args }) {
    const s = await (await ctx.client()).campaigns.status(args.id!);
    ctx.print(ctx.json ? json(s) : statusText(s, ctx.io.now()));
    return 0;
  },
};

async function readForecast(path: string): Promise<unknown> {
  try {
    return JSON.parse(await readFile(path, 'utf8'));
  } catch (cause) {
    throw new SluiceError('invalid_argument', `forecast: cannot read ${path} as JSON: ${(cause as Error).message}`, {
      path: 'forecast',
      cause,
    });
  }
}

const launch: Command = {
  path: ['campaigns', 'launch'],
  usage: '<id> <forecast.json> [--stream <name>] [--wait <duration>] [--actor <name>] [--json]',
  summary: 'ask for the admission decision of a campaign on a forecast, and print it',
  description: [
    'The forecast is JSON: {"total": N, "domains": {"gmail.com": n, …}} (counts adding up to N),',
    'or {"total": N, "sample": {…}} (a sample counted per domain, scaled to N). The scheduler',
    'decides: accept, delay, split into waves, reject, or held. Exits 0 unless it was rejected.',
    '',
    'Example:',
    '  sluice campaigns launch spring forecast.json --stream newsletter',
  ],
  args: [...ID, { name: 'forecast', help: 'a JSON file with the forecast' }],
  options: {
    stream: { type: 'string', value: '<name>', help: 'the stream its mail goes by (default: transactional)' },
    wait: { type: 'string', value: '<duration>', help: 'how long to wait for a scheduler (default: 10s)' },
    actor: { type: 'string', value: '<name>', help: 'who is launching (default: $USER)' },
    ...JSON_OPTION,
  },
  async run(ctx, { args, values }) {
    const cmd = 'campaigns launch';
    const actor = actorOf(values.actor, ctx.io.env, cmd);
    const timeoutMs = values.wait === undefined ? undefined : parseDuration(values.wait as string, 'wait', cmd);
    const forecast = await readForecast(args.forecast!);
    const record = await (
      await ctx.client()
    ).campaigns.launch(args.id!, forecast as never, {
      actor,
      ...(typeof values.stream === 'string' ? { stream: values.stream } : {}),
      ...(timeoutMs !== undefined ? { timeoutMs } : {}),
    });
    ctx.print(ctx.json ? json(record) : launchText(record, ctx.io.now()));
    return record.decision?.kind === 'reject' ? 1 : 0;
  },
};

const approve: Command = {
  path: ['campaigns', 'approve'],
  usage: '<id> --reason <text> [--actor <name>] [--json]',
  summary: "approve a campaign's delay or split (audited); a storage-critical reject is never approved",
  args: ID,
  options: {
    reason: { type: 'string', value: '<text>', help: 'why (required; audited)' },
    actor: { type: 'string', value: '<name>', help: 'who approves (default: $USER)' },
    ...JSON_OPTION,
  },
  async run(ctx: Context, { args, values }) {
    const cmd = 'campaigns approve';
    const reason = requireText(values.reason, 'reason', cmd);
    const actor = actorOf(values.actor, ctx.io.env, cmd);
    const record = await (await ctx.client()).campaigns.approve(args.id!, { actor, reason });
    ctx.print(ctx.json ? json(record) : launchText(record, ctx.io.now()));
    return 0;
  },
};

/** `sluice campaigns show|launch|approve` */
export const launchCommands: readonly Command[] = [show, launch, approve];
