import type { CampaignStatus } from '@sluice/client';
import { JSON_OPTION, actorOf, parseDuration, requireText } from '../args.js';
import type { Command, Context } from '../context.js';
import { json, table } from '../format.js';
import { launchCommands } from './campaign-launch.js';

const ID = [{ name: 'id', help: 'the campaign id' }] as const;

/** A campaign as `campaigns list --json` prints it. */
interface CampaignRow extends CampaignStatus {
  state: 'active' | 'paused' | 'cancelled' | 'done' | 'archived';
}

async function row(ctx: Context, id: string): Promise<CampaignRow> {
  const s = await (await ctx.client()).campaigns.status(id);
  const state = s.archive
    ? 'archived'
    : s.cancelled
      ? 'cancelled'
      : s.paused
        ? 'paused'
        : s.counts.accepted > 0 && s.pending === 0
          ? 'done'
          : 'active';
  return { ...s, state };
}

const list: Command = {
  path: ['campaigns', 'list'],
  usage: '[--archived] [--json]',
  summary: 'every active campaign (or, with --archived, every archived one) with its state, counts and queue',
  description: [
    'State: active, paused, cancelled, or done (every accepted message is final); archived with',
    '--archived. A finished campaign is archived campaigns.archiveAfterMs (7 days) after it finished.',
  ],
  args: [],
  options: {
    archived: { type: 'boolean', help: 'list the archived campaigns instead of the active ones' },
    ...JSON_OPTION,
  },
  async run(ctx, { values }) {
    const lifecycle = (await ctx.client()).campaigns;
    const ids = values.archived === true ? await lifecycle.archivedIds() : await lifecycle.ids();
    const rows: CampaignRow[] = [];
    for (const id of ids) {
      const r = await row(ctx, id).catch((err: unknown) => {
        // An archived record that expired between the list and its read is gone: skipped.
        if ((err as { code?: string }).code === 'unknown_campaign') return undefined;
        throw err;
      });
      if (r && (values.archived === true) === (r.state === 'archived')) rows.push(r);
    }
    ctx.print(
      ctx.json
        ? json(rows)
        : table(
            [
              'id',
              'state',
              'priority',
              'accepted',
              'sent',
              'rejected',
              'suppressed',
              'expired',
              'cancelled',
              'unconfirmed',
              'pending',
              'waiting',
              'delayed',
              'active',
              'name',
            ],
            rows.map((r) => [
              r.id,
              r.state,
              r.priority,
              r.counts.accepted,
              r.counts.sent,
              r.counts.rejected,
              r.counts.suppressed,
              r.counts.expired,
              r.counts.cancelled,
              r.counts.unconfirmed,
              r.pending,
              r.queue.waiting,
              r.queue.delayed,
              r.queue.active,
              r.name === r.id ? undefined : r.name,
            ]),
          ),
    );
    return 0;
  },
};

const pause: Command = {
  path: ['campaigns', 'pause'],
  usage: '<id> [--json]',
  summary: "stop a campaign's sends within a second; its backlog waits",
  args: ID,
  options: { ...JSON_OPTION },
  async run(ctx, { args }) {
    const id = args.id!;
    await (await ctx.client()).campaigns.pause(id);
    ctx.print(ctx.json ? json({ id, paused: true }) : `campaign ${id} paused`);
    return 0;
  },
};

const resume: Command = {
  path: ['campaigns', 'resume'],
  usage: '<id> [--json]',
  summary: 'continue a paused campaign where it stopped (a cancelled one is refused)',
  args: ID,
  options: { ...JSON_OPTION },
  async run(ctx, { args }) {
    const id = args.id!;
    // The lifecycle refuses an unknown id and a cancelled campaign (`campaign_cancelled`).
    await (await ctx.client()).campaigns.resume(id);
    ctx.print(ctx.json ? json({ id, paused: false }) : `campaign ${id} resumed`);
    return 0;
  },
};

const cancel: Command = {
  path: ['campaigns', 'cancel'],
  usage: '<id> --reason <text> [--actor <name>] [--wait <duration>] [--json]',
  summary: 'end every message of a campaign not yet final as cancelled; cannot be undone',
  description: [
    'Pauses the campaign, ends each of its messages not yet final as `cancelled` and removes its',
    'queued jobs. Sends already under way are waited for (--wait) and end as their answer says.',
    'Exits 0 once nothing of the campaign can be sent any more; 1 if sends were still under way',
    'when the wait ran out (they are listed).',
    '',
    'Example:',
    '  sluice campaigns cancel spring-sale --reason "wrong price in the subject"',
  ],
  args: ID,
  options: {
    reason: { type: 'string', value: '<text>', help: 'why (required; kept on the campaign and each message)' },
    actor: { type: 'string', value: '<name>', help: 'who is doing this (default: $USER)' },
    wait: {
      type: 'string',
      value: '<duration>',
      help: 'how long to wait for sends under way (default: the longest provider timeout + 5s)',
    },
    ...JSON_OPTION,
  },
  async run(ctx, { values, args }) {
    const cmd = 'campaigns cancel';
    const reason = requireText(values.reason, 'reason', cmd);
    const actor = actorOf(values.actor, ctx.io.env, cmd);
    const waitMs = values.wait === undefined ? undefined : parseDuration(values.wait as string, 'wait', cmd);
    const { cancelCampaign } = await import('@sluice/ops');
    const r = await cancelCampaign(await ctx.deps(), args.id!, {
      actor,
      reason,
      ...(waitMs !== undefined ? { waitMs } : {}),
    });
    if (ctx.json) ctx.print(json(r));
    else {
      ctx.print(
        `campaign ${r.id} cancelled: ${r.cancelled} messages cancelled, ${r.alreadyFinal} already final, ${r.finishedInFlight} sends under way finished, ${r.removedJobs} jobs removed`,
      );
      if (r.stillInFlight.length > 0)
        ctx.print(`still being sent (may be accepted by the ESP): ${r.stillInFlight.join(' ')}`);
    }
    return r.stillInFlight.length > 0 ? 1 : 0;
  },
};

const archive: Command = {
  path: ['campaigns', 'archive'],
  usage: '<id> [--actor <name>] [--json]',
  summary: 'archive a finished campaign now: its queue goes, its record stays (campaigns show)',
  description: [
    'Refused (exit 1) while the campaign is not finished: messages not yet final, jobs in its',
    'queue, or a launch waiting; the message says which. The leader archives finished campaigns',
    'by itself after campaigns.archiveAfterMs (7 days). The record expires after',
    'campaigns.archivedRetentionMs (90 days). Audited.',
  ],
  args: ID,
  options: { actor: { type: 'string', value: '<name>', help: 'who is doing this (default: $USER)' }, ...JSON_OPTION },
  async run(ctx, { values, args }) {
    const id = args.id!;
    const actor = actorOf(values.actor, ctx.io.env, 'campaigns archive');
    const { archiveCampaign } = await import('@sluice/ops');
    const archived = await archiveCampaign(await ctx.deps(), id, { actor });
    ctx.print(
      ctx.json
        ? json({ id, archived: true })
        : archived
          ? `campaign ${id} archived`
          : `campaign ${id} was archived already`,
    );
    return 0;
  },
};

const remove: Command = {
  path: ['campaigns', 'delete'],
  usage: '<id> [--actor <name>] [--json]',
  summary: 'delete an archived (or finished) campaign for good; its id is free again',
  description: [
    'Refused (exit 1) for a campaign that is not finished. Its messages keep their records until',
    'their own TTL (delivery.recordTtlSeconds). Audited.',
  ],
  args: ID,
  options: { actor: { type: 'string', value: '<name>', help: 'who is doing this (default: $USER)' }, ...JSON_OPTION },
  async run(ctx, { values, args }) {
    const id = args.id!;
    const actor = actorOf(values.actor, ctx.io.env, 'campaigns delete');
    const { deleteCampaign } = await import('@sluice/ops');
    await deleteCampaign(await ctx.deps(), id, { actor });
    ctx.print(ctx.json ? json({ id, deleted: true }) : `campaign ${id} deleted`);
    return 0;
  },
};

/** `sluice campaigns …` */
export const campaignCommands: readonly Command[] = [list, pause, resume, cancel, archive, remove, ...launchCommands];
