import type { Redis } from 'ioredis';
import { HOME_COUNT, createKeys } from '@sluice/core';
import { ALIVE_MS, readFleet } from '@sluice/store';
import { moveCampaigns, moveGoneBitmaps } from './migrate-layout-campaigns.js';
import {
  LAYOUT_KINDS,
  after,
  dropMatching,
  glob,
  moveMatching,
  movePairs,
  splitFirst,
  type LayoutKind,
  type MigrationReport,
  type MoveContext,
} from './migrate-layout-moves.js';
import { checkQueues, moveQueues } from './migrate-layout-queues.js';

export { LAYOUT_KINDS, type LayoutKind, type MigrationReport };

/** The layout {@link migrateKeyLayout} writes, recorded in `<prefix>:layout`. */
export const KEY_LAYOUT = '2';

/** A process of the fleet beat this recently: the migration refuses to run (twice `ALIVE_MS`). */
export const FLEET_QUIET_MS = 30_000;

/** Why {@link migrateKeyLayout} refused to run. */
export type MigrationRefusal = 'cluster' | 'fleet_running' | 'job_active' | 'flows';

/**
 * {@link migrateKeyLayout} refused to run and wrote nothing: the message says why and what to
 * do (stop the fleet, wait for active jobs, run it against the single Redis of the old layout).
 */
export class MigrationRefusedError extends Error {
  override readonly name = 'MigrationRefusedError';
  /** A stable code, as every Sluice error has. */
  readonly code = 'migration_refused';
  /** What to do: nothing changes by trying again until the operator acts. */
  readonly action = 'permanent';
  constructor(
    /** Which check refused. */
    readonly reason: MigrationRefusal,
    message: string,
  ) {
    super(`${message} (nothing was written)`);
  }
}

/** Options of {@link migrateKeyLayout}. */
export interface MigrateLayoutOptions {
  /** A connection to the single Redis holding the old layout (the caller's; not closed here). */
  redis: Redis;
  /** `redis.prefix` of the fleet. @defaultValue `'sluice'` */
  prefix?: string;
  /** Count what would move and write nothing. @defaultValue `false` */
  dryRun?: boolean;
  /** Progress, a line at a time. @defaultValue none */
  log?: (line: string) => void;
  /** Now, for the fleet's heartbeat check. @defaultValue `Date.now` */
  now?: () => number;
}

/**
 * Moves a deployment's keys from the layout before 0.3 (one Redis, no hash tags) to the layout
 * of `createKeys` now, which runs on Redis Cluster (docs/operations/upgrading.md). Run once,
 * with every process of the fleet stopped, against the single Redis that holds the data.
 *
 * Refuses ({@link MigrationRefusedError}, nothing written) on a cluster, while a process of the
 * fleet beat within {@link FLEET_QUIET_MS}, while a job is active in an old queue (its lock
 * exists), and for a flow's or a repeatable job (Sluice makes none). Idempotent and resumable:
 * each key moves by a rename that never overwrites, so once moved its old name is gone and a
 * run after a crash, or a second run, moves only what is left (nothing, once done). ESP event
 * marks are dropped ({@link MigrationReport.dropped}). Ends by setting `<prefix>:layout` to
 * {@link KEY_LAYOUT} when no old key is left.
 */
export async function migrateKeyLayout(options: MigrateLayoutOptions): Promise<MigrationReport> {
  const { redis } = options;
  const prefix = options.prefix ?? 'sluice';
  const keys = createKeys(prefix);
  const report: MigrationReport = {
    dryRun: options.dryRun === true,
    layoutBefore: await redis.get(`${prefix}:layout`),
    moved: Object.fromEntries(LAYOUT_KINDS.map((k) => [k, 0])) as Record<LayoutKind, number>,
    total: 0,
    queues: [],
    dropped: 0,
    left: [],
  };
  const ctx: MoveContext = { redis, keys, prefix, dryRun: report.dryRun, report, log: options.log ?? (() => {}) };
  await refuseUnsafe(ctx, options.now ?? Date.now);
  await moveRecords(ctx);
  await moveCampaignState(ctx);
  await moveFeedback(ctx);
  await moveSignals(ctx);
  await step(ctx, 'outcomes', () => moveOutcomes(ctx));
  await step(ctx, 'queueKeys', () => moveQueues(ctx));
  if (!report.dryRun && report.left.length === 0) await redis.set(`${prefix}:layout`, KEY_LAYOUT);
  return report;
}

/** Runs one kind's move and says what it moved. */
async function step(ctx: MoveContext, kind: LayoutKind, run: () => Promise<void>): Promise<void> {
  await run();
  ctx.log(`${kind}: ${ctx.report.moved[kind]} ${ctx.dryRun ? 'to move' : 'moved'}`);
}

/** Throws {@link MigrationRefusedError} when moving the keys now is not safe. */
async function refuseUnsafe(ctx: MoveContext, now: () => number): Promise<void> {
  const { redis, keys, prefix } = ctx;
  const info = await redis.info('cluster');
  if (/^cluster_enabled:1\b/m.test(info))
    throw new MigrationRefusedError(
      'cluster',
      'the Redis is a cluster: the old layout never ran on one; run this against the single Redis that holds the data, then move it',
    );
  // readFleet counts beats within ALIVE_MS of the time given: read from earlier, within FLEET_QUIET_MS.
  const fleet = await readFleet(redis, keys, now() - (FLEET_QUIET_MS - ALIVE_MS));
  if (fleet.processes.length > 0) {
    const names = fleet.processes.map((p) => p.id).join(', ');
    const n = fleet.processes.length;
    throw new MigrationRefusedError(
      'fleet_running',
      `a fleet runs under prefix ${prefix} (${n} process${n === 1 ? '' : 'es'} beat within ${FLEET_QUIET_MS / 1000} s: ${names}); stop every process first, producers too`,
    );
  }
  const busy = await checkQueues(ctx);
  if (busy?.reason === 'job_active')
    throw new MigrationRefusedError('job_active', `${busy.why}: stop the workers and wait for their jobs to end`);
  if (busy) throw new MigrationRefusedError('flows', `${busy.why}: Sluice makes none; the migration cannot move it`);
}

/** Records, attempt logs, compact blocks and bitmaps of records gone: into the message homes. */
async function moveRecords(ctx: MoveContext): Promise<void> {
  const { keys, prefix } = ctx;
  const under = (name: string): [string, string] => [`${prefix}:${name}:`, `${glob(`${prefix}:${name}:`)}*`];
  const [msg, msgs] = under('msg');
  // eslint-disable-next-line no-restricted-syntax -- the migration renames the record, reading none of it
  const message = (id: string | undefined): string | undefined => id && keys.message(id);
  await step(ctx, 'records', () => moveMatching(ctx, 'records', msgs, (k) => message(after(k, msg))));
  const [att, atts] = under('attempts');
  await step(ctx, 'attempts', () =>
    moveMatching(ctx, 'attempts', atts, (k) => {
      const id = after(k, att);
      return id && keys.attempts(id);
    }),
  );
  const [mc, mcs] = under('mc');
  await step(ctx, 'compactBlocks', () =>
    moveMatching(ctx, 'compactBlocks', mcs, (k) => {
      const rest = after(k, mc) ?? '';
      const at = rest.lastIndexOf(':');
      const [id, block] = [rest.slice(0, at), rest.slice(at + 1)];
      return at > 0 && !id.includes(':') && /^\d+$/.test(block) ? keys.compactRecords(id, Number(block)) : undefined;
    }),
  );
  await step(ctx, 'goneBitmaps', () => moveGoneBitmaps(ctx));
}

/** Campaign hashes (counters into home 0), content, cursors, launches and the campaign sets. */
async function moveCampaignState(ctx: MoveContext): Promise<void> {
  const { keys, prefix } = ctx;
  await moveCampaigns(ctx);
  ctx.log(`campaigns: ${ctx.report.moved.campaigns} ${ctx.dryRun ? 'to move' : 'moved'}`);
  ctx.log(`campaignKeys: ${ctx.report.moved.campaignKeys} ${ctx.dryRun ? 'to move' : 'moved'}`);
  const launch = `${prefix}:launch:`;
  await step(ctx, 'launches', () =>
    moveMatching(ctx, 'launches', `${glob(launch)}*`, (k) => {
      const id = after(k, launch);
      return id === undefined || id.includes(':') ? undefined : keys.launch(id);
    }),
  );
  const sets: [string, string][] = [
    [`${prefix}:campaigns`, keys.campaigns()],
    [`${prefix}:campaigns:work`, keys.campaignsWithWork()],
    [`${prefix}:campaigns:archived`, keys.archivedCampaigns()],
    [`${prefix}:campaigns:archiving`, keys.campaignsArchiving()],
    [`${prefix}:launches`, keys.launches()],
  ];
  await step(ctx, 'campaignSets', () => movePairs(ctx, 'campaignSets', sets));
}

/**
 * Suppression lists, soft bounces and full-mailbox counts: under the tenant's tag. The old ESP
 * event marks are dropped. The patterns pass by the new keys (`<prefix>:sup:{t-<tenant>}`): a
 * tenant's id never holds `{`.
 */
async function moveFeedback(ctx: MoveContext): Promise<void> {
  const { keys, prefix } = ctx;
  const old = (name: string): [string, string] => [`${prefix}:${name}:`, `${glob(`${prefix}:${name}:`)}[^{]*`];
  const [sup, sups] = old('sup');
  await step(ctx, 'suppressions', () =>
    moveMatching(ctx, 'suppressions', sups, (k) => {
      const tenant = after(k, sup);
      return tenant === undefined || tenant.includes(':') ? undefined : keys.suppression(tenant);
    }),
  );
  const [soft, softs] = old('soft');
  await step(ctx, 'softBounces', () =>
    moveMatching(ctx, 'softBounces', softs, (k) => {
      const parts = splitFirst(after(k, soft));
      return parts && keys.softBounces(...parts);
    }),
  );
  const [full, fulls] = old('mbfull');
  await step(ctx, 'mailboxFull', () =>
    moveMatching(ctx, 'mailboxFull', fulls, (k) => {
      const parts = splitFirst(after(k, full));
      return parts && keys.mailboxFull(...parts);
    }),
  );
  ctx.report.dropped = await dropMatching(ctx, old('evt')[1]);
  ctx.log(
    `ESP event marks: ${ctx.report.dropped} ${ctx.dryRun ? 'to drop' : 'dropped'} (the new ones carry the tenant)`,
  );
}

/**
 * The outcome stream: renamed to home 0's (its entries, consumer groups and their pending
 * entries go with it; an event's id reads `0-<ms>-<seq>` now). A read spans every home's
 * stream, so each group is made on the other homes' too, as `outcomes.subscribe` makes it
 * (their streams are new and empty: the group starts at their beginning).
 */
async function moveOutcomes(ctx: MoveContext): Promise<void> {
  const { redis, keys, prefix } = ctx;
  const home0 = keys.outcomes(0);
  await movePairs(ctx, 'outcomes', [[`${prefix}:outcomes`, home0]]);
  const source = ctx.dryRun && (await redis.exists(home0)) === 0 ? `${prefix}:outcomes` : home0;
  const groupsOf = async (stream: string): Promise<string[]> => {
    if ((await redis.exists(stream)) === 0) return [];
    const info = (await redis.xinfo('GROUPS', stream)) as unknown[][];
    return info.map((g) => String(g[g.indexOf('name') + 1]));
  };
  const groups = await groupsOf(source);
  let made = 0;
  for (let h = 1; h < HOME_COUNT && groups.length > 0; h++) {
    const stream = keys.outcomes(h);
    const there = new Set(await groupsOf(stream));
    for (const group of groups.filter((g) => !there.has(g))) {
      if (!ctx.dryRun) await redis.xgroup('CREATE', stream, group, '0', 'MKSTREAM');
      made++;
    }
  }
  if (made > 0) ctx.log(`outcome groups: ${made} ${ctx.dryRun ? 'to make' : 'made'} on the other homes' streams`);
}

/** Signal buckets, their indexes and the marks of events counted in them: under the signals' tag. */
async function moveSignals(ctx: MoveContext): Promise<void> {
  const { keys, prefix } = ctx;
  const sig = `${prefix}:sig:`;
  // `<kind>:<name>:<bucket start>`: a name (a circuit's, a receiver's) may hold `:`, so the start
  // is read from the right and the kind (one word) from the left.
  await step(ctx, 'signals', () =>
    moveMatching(ctx, 'signals', `${glob(sig)}*`, (k) => {
      const [kind, rest] = splitFirst(after(k, sig)) ?? [];
      const at = rest?.lastIndexOf(':') ?? -1;
      const start = rest?.slice(at + 1) ?? '';
      if (!kind || !rest || at <= 0 || !/^\d+$/.test(start)) return undefined;
      return keys.signals(kind, rest.slice(0, at), Number(start));
    }),
  );
  const idx = `${prefix}:sigidx:`;
  await step(ctx, 'signalIndexes', () =>
    moveMatching(ctx, 'signalIndexes', `${glob(idx)}*`, (k) => {
      const kind = after(k, idx);
      return kind === undefined || kind.includes(':') ? undefined : keys.signalIndex(kind);
    }),
  );
  const evtsig = `${prefix}:evtsig:`;
  await step(ctx, 'eventSignals', () =>
    moveMatching(ctx, 'eventSignals', `${glob(evtsig)}*`, (k) => {
      const parts = splitFirst(after(k, evtsig));
      return parts && keys.feedbackSignal(...parts);
    }),
  );
}
