import { PRIORITY_CLASSES } from '@sluice/core';
import { glob, movePairs, scanKeys, type MoveContext } from './migrate-layout-moves.js';

// The BullMQ queues of the key layout's migration. Every key of a queue is `<prefix>:<queue>:…`
// and no value names a queue's key (lists and sets hold job ids), but for a flow's child
// (`parentKey`) or a repeatable job (`rjk`), which Sluice never makes: those refuse the run.

/** One family of old queues: how to find their keys, and a key's new name. */
interface QueueFamily {
  /** SCAN patterns of the family's keys. */
  patterns: string[];
  /** The old queue's name and the rest of the key after it, or `undefined` for another key. */
  parse(key: string): { queue: string; rest: string } | undefined;
  /** The new queue's name for an old one's. */
  rename(queue: string): string;
}

/** The keys of a queue that are not a job's hash (`<prefix>:<queue>:<suffix>`, BullMQ's QueueKeys). */
const QUEUE_SUFFIXES = new Set([
  'active',
  'wait',
  'waiting-children',
  'paused',
  'id',
  'delayed',
  'prioritized',
  'stalled-check',
  'completed',
  'failed',
  'stalled',
  'repeat',
  'limiter',
  'meta',
  'events',
  'pc',
  'marker',
]);

/** The old queues: intake and dispatch per class, one per campaign. */
function families(ctx: MoveContext): QueueFamily[] {
  const { prefix, keys } = ctx;
  const head = `${prefix}:`;
  const byName = (names: Map<string, string>): QueueFamily['parse'] => {
    return (key) => {
      for (const queue of names.keys())
        if (key.startsWith(`${head}${queue}:`)) return { queue, rest: key.slice(head.length + queue.length + 1) };
      return undefined;
    };
  };
  const fixed = new Map<string, string>();
  for (const c of PRIORITY_CLASSES) {
    fixed.set(`intake-${c}`, keys.intakeQueue(c));
    fixed.set(`dispatch-${c}`, keys.dispatchQueue(c, 0));
  }
  return [
    {
      patterns: [...fixed.keys()].map((q) => `${glob(`${head}${q}:`)}*`),
      parse: byName(fixed),
      rename: (queue) => fixed.get(queue) ?? queue,
    },
    {
      patterns: [`${glob(`${head}campaign-`)}*`],
      parse: (key) => {
        const match = /^campaign-([A-Za-z0-9_-]+):(.+)$/s.exec(key.slice(head.length));
        return match ? { queue: `campaign-${match[1]}`, rest: match[2]! } : undefined;
      },
      rename: (queue) => keys.campaignQueue(queue.slice('campaign-'.length)),
    },
  ];
}

/** Every old queue key, parsed, a SCAN page at a time. */
async function* queueKeys(
  ctx: MoveContext,
): AsyncGenerator<{ key: string; family: QueueFamily; parsed: ReturnType<QueueFamily['parse']> }[]> {
  for (const family of families(ctx))
    for (const pattern of family.patterns)
      for await (const found of scanKeys(ctx.redis, pattern))
        yield found.map((key) => ({ key, family, parsed: family.parse(key) }));
}

/**
 * Why the queues cannot move now, or `undefined`: a job is active (its lock exists: a worker
 * runs it), or a job is a flow's child or repeatable (its hash names keys of its queue).
 */
export async function checkQueues(
  ctx: MoveContext,
): Promise<{ reason: 'job_active' | 'flows'; why: string } | undefined> {
  for await (const page of queueKeys(ctx)) {
    const jobs: { key: string; queue: string }[] = [];
    for (const { key, parsed } of page) {
      if (!parsed) continue;
      const { queue, rest } = parsed;
      if (rest.endsWith(':lock')) {
        const job = rest.slice(0, -':lock'.length);
        return { reason: 'job_active', why: `job ${job} of queue ${queue} is active (${key} exists)` };
      }
      if (rest === 'repeat') return { reason: 'flows', why: `queue ${queue} has repeatable jobs (${key})` };
      if (!rest.includes(':') && !QUEUE_SUFFIXES.has(rest)) jobs.push({ key, queue });
    }
    if (jobs.length === 0) continue;
    const fields = await ctx.redis.pipeline(jobs.map(({ key }) => ['hmget', key, 'parentKey', 'rjk'])).exec();
    for (const [i, { key, queue }] of jobs.entries()) {
      const [err, values] = fields?.[i] ?? [null, null];
      // Not a hash: not a job (BullMQ writes no other key of that shape), nothing to check.
      if (err || !Array.isArray(values)) continue;
      const [parentKey, repeat] = values as (string | null)[];
      if (parentKey) return { reason: 'flows', why: `job ${key} of queue ${queue} has a parent (${parentKey})` };
      if (repeat) return { reason: 'flows', why: `job ${key} of queue ${queue} is repeatable (${repeat})` };
    }
  }
  return undefined;
}

/**
 * Moves every key of every old queue to its new queue's name (`<prefix>:<new queue>:<rest>`):
 * jobs, their logs, lists, sets, meta, events, the job counter. Resolves the old queues' names.
 */
export async function moveQueues(ctx: MoveContext): Promise<void> {
  const names = new Set(ctx.report.queues);
  for await (const page of queueKeys(ctx)) {
    const pairs: [string, string][] = [];
    for (const { key, family, parsed } of page) {
      if (!parsed) {
        ctx.report.left.push({ key, why: 'unparsed' });
        continue;
      }
      names.add(parsed.queue);
      pairs.push([key, `${ctx.prefix}:${family.rename(parsed.queue)}:${parsed.rest}`]);
    }
    await movePairs(ctx, 'queueKeys', pairs);
  }
  ctx.report.queues = [...names].sort();
}
