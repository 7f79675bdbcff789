import { SluiceError } from '@sluice/core';
import { JSON_OPTION } from '../args.js';
import type { Command } from '../context.js';
import { table, when } from '../format.js';

const unknown: Command = {
  path: ['replies', 'unknown'],
  usage: '[--receiver <receiver>] [--limit <n>] [--json]',
  summary: 'the latest replies the classifier could not read, newest first: what a new rule needs',
  description: [
    'The workers keep the fleet’s latest 1,000 replies of family unknown. The governor’s rule',
    'unknown-replies alerts (log and `sluice status`) when they pass 5% of a receiver’s attempts.',
    'Example:',
    '  sluice replies unknown --receiver google --limit 5',
  ],
  args: [],
  options: {
    receiver: { type: 'string', value: '<receiver>', help: 'only this receiver’s (its quota key name, e.g. google)' },
    limit: { type: 'string', value: '<n>', help: 'at most this many (1–1000, default 20)' },
    ...JSON_OPTION,
  },
  async run(ctx, { values }) {
    const limit = values.limit === undefined ? 20 : Number(values.limit);
    if (!Number.isInteger(limit) || limit < 1 || limit > 1_000) {
      throw new SluiceError('invalid_argument', '--limit must be a whole number from 1 to 1000', { path: 'limit' });
    }
    const receiver = typeof values.receiver === 'string' ? values.receiver : undefined;
    const { config, redis, keys } = await ctx.deps();
    const { createStore } = await import('@sluice/store');
    const store = createStore({ redis, keys, recordTtlSeconds: config.delivery.recordTtlSeconds });
    const replies = await store.unknownReplies({ limit, ...(receiver !== undefined ? { receiver } : {}) });
    if (ctx.json) {
      ctx.print(JSON.stringify(replies, null, 2));
      return 0;
    }
    if (replies.length === 0) {
      ctx.print(`no unknown replies${receiver !== undefined ? ` from ${receiver}` : ''} kept`);
      return 0;
    }
    const now = ctx.io.now();
    ctx.print(
      table(
        ['at', 'receiver', 'provider', 'classifier', 'reply'],
        replies.map((r) => [when(r.at, now), r.receiver, r.provider, r.version, r.reply.replace(/\s+/g, ' ')]),
      ),
    );
    return 0;
  },
};

/** `sluice replies …` */
export const replyCommands: readonly Command[] = [unknown];
