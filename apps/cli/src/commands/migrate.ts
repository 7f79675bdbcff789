import type { MigrationReport } from '@sluice/ops';
import { JSON_OPTION } from '../args.js';
import type { Command } from '../context.js';
import { table } from '../format.js';

/** What each kind of key is called in the summary. */
const KIND_NAMES: Record<keyof MigrationReport['moved'], string> = {
  records: 'message records',
  attempts: 'attempt logs',
  compactBlocks: 'compact record blocks',
  goneBitmaps: 'bitmaps of records gone',
  campaigns: 'campaigns (hash, counters, pause copies)',
  campaignKeys: 'campaign contents and cursors',
  launches: 'campaign launches',
  campaignSets: 'campaign sets',
  suppressions: 'suppression lists',
  softBounces: 'soft bounces',
  mailboxFull: 'full-mailbox counts',
  signals: 'signal buckets',
  signalIndexes: 'signal indexes',
  eventSignals: 'ESP events counted in signals',
  outcomes: 'outcome stream',
  queueKeys: 'queue keys',
};

/** The summary a person reads after a run. */
export function formatMigration(r: MigrationReport, prefix: string): string {
  const verb = r.dryRun ? 'would move' : 'moved';
  const lines = [
    table(
      ['keys', verb],
      Object.entries(r.moved).map(([kind, n]) => [KIND_NAMES[kind as keyof typeof KIND_NAMES], n]),
    ),
    `queues: ${r.queues.length === 0 ? 'none' : r.queues.join(', ')}`,
    `${r.dropped} ESP event marks ${r.dryRun ? 'would be ' : ''}dropped (${prefix}:evt:…): the new ones carry the tenant; an ESP's retry of an old event is applied again, which changes nothing`,
  ];
  for (const { key, why } of r.left.slice(0, 20))
    lines.push(`left: ${key} (${why === 'exists' ? 'its new key exists already' : 'not a key of the old layout'})`);
  if (r.left.length > 20) lines.push(`left: ${r.left.length - 20} more`);
  if (r.total === 0 && r.dropped === 0 && r.left.length === 0)
    lines.push(`nothing to move: the keys under ${prefix} are in the new layout`);
  if (r.dryRun) lines.push('dry run: nothing was written');
  else if (r.left.length === 0) lines.push(`done: ${prefix}:layout is 2`);
  return lines.join('\n');
}

const layout: Command = {
  path: ['migrate', 'layout'],
  usage: '[--dry-run] [--json]',
  summary: 'move the keys of a Redis written before 0.3 to the layout that runs on Redis Cluster',
  description: [
    'Run once, with every process of the fleet stopped (producers too), against the single Redis',
    'that holds the data (REDIS_URL or redis.url; the old layout never ran on a cluster). It is safe',
    'to run again: a second run, or one after a crash, moves only what is left. It refuses, writing',
    'nothing, on a cluster, while a process beat within 30 s, or while a job is active. ESP event',
    'marks are dropped. See docs/operations/upgrading.md.',
    'Example:',
    '  sluice migrate layout --dry-run && sluice migrate layout',
  ],
  args: [],
  options: {
    'dry-run': { type: 'boolean', help: 'count what would move and write nothing' },
    ...JSON_OPTION,
  },
  async run(ctx, { values }) {
    const { config, redis } = await ctx.deps();
    const { migrateKeyLayout } = await import('@sluice/ops');
    const prefix = config.redis.prefix;
    const dryRun = values['dry-run'] === true;
    if (!ctx.json)
      ctx.print(`Moving the keys under ${prefix} to the layout for Redis Cluster${dryRun ? ' (dry run)' : ''}`);
    const report = await migrateKeyLayout({
      redis,
      prefix,
      dryRun,
      log: (line) => (ctx.json ? undefined : ctx.print(`  ${line}`)),
      now: () => ctx.io.now(),
    });
    ctx.print(ctx.json ? JSON.stringify(report, null, 2) : formatMigration(report, prefix));
    return report.left.length === 0 ? 0 : 1;
  },
};

/** `sluice migrate …` */
export const migrateCommands: readonly Command[] = [layout];
