import type { StatusSnapshot } from '@sluice/ops';
import { JSON_OPTION } from '../args.js';
import type { Command } from '../context.js';
import { duration, json, rate, table, when } from '../format.js';
import { overridesTable } from './override.js';

/** The snapshot as sections of tables, for a terminal. */
export function formatStatus(s: StatusSnapshot, now: number): string {
  const sections: [string, string][] = [
    ['Fleet', formatFleet(s.fleet, now)],
    ['Keys', formatKeys(s.keys, now)],
    [
      'Queues',
      table(
        ['queue', 'waiting', 'delayed', 'active', 'oldest'],
        s.queues.map((q) => [
          q.queue,
          q.waiting,
          q.delayed,
          q.active,
          q.oldestAgeMs > 0 ? duration(q.oldestAgeMs) : undefined,
        ]),
      ),
    ],
    [
      'Latency (accepted by Sluice to accepted by the provider)',
      table(
        ['class', 'p50', 'p95', 'samples'],
        Object.entries(s.latency).map(([c, l]) => [c, duration(l.p50), duration(l.p95), l.samples]),
      ),
    ],
    ['Outcomes', formatOutcomes(s.outcomes)],
    [
      'Circuits',
      table(
        ['circuit', 'state', 'until'],
        s.circuits.map((c) => [c.name, c.state, when(c.untilMs, now)]),
      ),
    ],
    [
      'Alerts (last 15 minutes)',
      table(
        ['at', 'rule', 'key', 'saw'],
        s.alerts.map((a) => [
          when(a.at, now),
          a.rule,
          `${a.scope} ${a.name}`,
          a.ratio === undefined
            ? `${a.count} ${a.signal}`
            : `${a.count} of ${a.volume} attempts (${(a.ratio * 100).toFixed(1)}%) ${a.signal}`,
        ]),
      ),
    ],
    ['Overrides', overridesTable(s.overrides, now)],
    [
      'Campaigns',
      table(
        ['id', 'state', 'priority', 'counts', 'name'],
        s.campaigns.map((c) => [
          c.id,
          c.state,
          c.priority,
          Object.entries(c.counts)
            .map(([k, v]) => `${k} ${v}`)
            .join(', '),
          c.name === c.id ? undefined : c.name,
        ]),
      ),
    ],
  ];
  return [
    `Sluice status at ${new Date(s.at).toISOString()}`,
    ...sections.map(([title, body]) => `\n${title}\n${body}`),
  ].join('\n');
}

/** Each key's rates, factor, tokens and the override in force. */
function formatKeys(keys: StatusSnapshot['keys'], now: number): string {
  return table(
    ['scope', 'name', 'send rate', 'effective', 'configured', 'factor', 'tokens', 'unknown', 'override'],
    keys.map((k) => [
      k.scope,
      k.name,
      rate(k.sendRate),
      rate(k.effectiveRate),
      rate(k.configuredRate),
      k.factor,
      k.tokens,
      k.unknownShare === undefined ? undefined : `${(k.unknownShare * 100).toFixed(1)}%`,
      k.override
        ? `${k.override.kind === 'rate' ? `rate ${rate(k.override.rate)}` : k.override.kind} until ${when(k.override.untilMs, now)}`
        : undefined,
    ]),
  );
}

/** The fleet's outcome counters in one row. */
function formatOutcomes(o: StatusSnapshot['outcomes']): string {
  return table(
    [
      'recipients',
      'attempts',
      'accepted',
      'recipients deferred',
      'deferred attempts',
      'rejected',
      'retries',
      'attempts/recipient',
    ],
    [
      [
        o.recipients,
        o.attempts,
        o.accepted,
        o.deferredRecipients,
        o.deferred,
        o.rejected,
        o.retries,
        o.attemptsPerRecipient,
      ],
    ],
  );
}

/** Who is there (per role, with versions), what sends to the sandbox, and mail waiting for a scheduler. */
function formatFleet(f: StatusSnapshot['fleet'], now: number): string {
  const lines = [
    f.processes.length === 0
      ? 'no process beats under this prefix: no fleet runs here (or it uses another redis.prefix)'
      : table(
          ['process', 'role', 'version', 'schema', 'started', 'sandbox'],
          f.processes.map((p) => [
            p.id,
            p.role,
            p.version,
            p.schema,
            when(p.startedAt, now),
            p.sandbox.length > 0 ? p.sandbox.join(', ') : undefined,
          ]),
        ),
  ];
  if (f.sandbox.length > 0) {
    lines.push(`SANDBOX: ${f.sandbox.join(', ')} send to the local sandbox ESP; their mail never leaves`);
  }
  if (f.alive.scheduler === 0 && f.processes.length > 0) lines.push('no scheduler runs: nothing is admitted');
  if (f.unscheduled) {
    lines.push(
      `${f.unscheduled.count} messages accepted while no scheduler ran (first ${when(f.unscheduled.firstAt, now)}, last ${when(f.unscheduled.lastAt, now)})`,
    );
  }
  return lines.join('\n');
}

const command: Command = {
  path: ['status'],
  usage: '[--json]',
  summary: 'the fleet at a glance: processes, keys, queues, latency, circuits, overrides, campaigns',
  description: [
    'Rates are messages per second; `effective` is the configured rate at the factor and any override in force.',
  ],
  args: [],
  options: { ...JSON_OPTION },
  async run(ctx) {
    const { createStatus } = await import('@sluice/ops');
    const status = createStatus(await ctx.deps());
    const snapshot = await status.snapshot().finally(() => status.close());
    ctx.print(ctx.json ? json(snapshot) : formatStatus(snapshot, ctx.io.now()));
    return 0;
  },
};

/** `sluice status` */
export const statusCommands: readonly Command[] = [command];
