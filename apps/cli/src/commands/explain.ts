import type { Explanation } from '@sluice/ops';
import { JSON_OPTION } from '../args.js';
import type { Command } from '../context.js';
import { fields, when, type Cell } from '../format.js';

/** The explanation as a person reads it: what, why, and the record below. */
export function formatExplanation(e: Explanation, now: number): string {
  const lines: [string, Cell][] = [
    ['message', e.id],
    ['state', e.state],
    ['summary', e.summary],
  ];
  if (e.heldBy) {
    const until = e.heldBy.untilMs === undefined ? '' : ` until ${when(e.heldBy.untilMs, now)}`;
    lines.push(['held by', `${e.heldBy.layer} ${e.heldBy.key}${until}: ${e.heldBy.reason}`]);
  }
  lines.push(['attempts', e.attempts]);
  const record = Object.entries(e.record).sort(([a], [b]) => a.localeCompare(b));
  const out = [fields(lines)];
  if (record.length > 0)
    out.push(
      '',
      'record',
      fields(
        record.map(([k, v]) => [
          `  ${k}`,
          /At$/.test(k) && /^\d{12,}$/.test(v) ? new Date(Number(v)).toISOString() : v,
        ]),
      ),
    );
  return out.join('\n');
}

const command: Command = {
  path: ['explain'],
  usage: '<message-id> [--json]',
  summary: "a message's state and what holds it, in words (exits 1 for an unknown id)",
  description: ['Example:', '  sluice explain m1f3a9c2d7e4b5a60'],
  args: [{ name: 'message-id', help: 'the id send() returned' }],
  options: { ...JSON_OPTION },
  async run(ctx, { args }) {
    const { explain } = await import('@sluice/ops');
    const e = await explain(await ctx.deps(), args['message-id']!);
    ctx.print(ctx.json ? JSON.stringify(e, null, 2) : formatExplanation(e, ctx.io.now()));
    return e.state === 'unknown' ? 1 : 0;
  },
};

/** `sluice explain` */
export const explainCommands: readonly Command[] = [command];
