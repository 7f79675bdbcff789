import { setTimeout as sleep } from 'node:timers/promises';
import { jobIdOf, organisationNamed, type DispatchBatchData, type DispatchJobData } from '@sluice/core';
import { messageIdHeader, type BatchSupport, type Outcome, type Provider } from '@sluice/providers';
import type { BatchSubmitResult } from '@sluice/store';
import type { DeliveryContext, DeliveryGate, DeliveryResult } from './context.js';
import type { Learner } from './learn.js';
import { NoRoom } from './arrival.js';
import { CONNECTION_WAIT_MS, type ReceiverConnections } from './connections.js';
import { arrivalLayers, precheck, standsAside } from './precheck.js';
import { readmit } from './readmit.js';
import { rendered, type Renderer } from './render.js';
import { settle, settleSent } from './settle.js';
import type { OnStep } from './steps.js';

// A dispatch batch through the worker (docs/design/batches.md): each recipient checked as a
// single send would be, the sendable ones in one ESP call per group the adapter can carry
// together, placed together at the arrival gate and marked `submitted` together (all or none)
// before the request's final bytes, then each recipient's own outcome learnt and settled.

/** A batch job as the engine sees it: its recipients, and how it waits in its queue. */
export interface DeliveryBatchJob {
  readonly id: string;
  readonly data: DispatchBatchData;
  /** Moves the batch back to its dispatch queue with `data`, delayed until `untilMs`. */
  delay(data: DispatchBatchData, untilMs: number): Promise<void>;
}

/** What the batch delivery shares with the engine. */
export interface BatchParts {
  ctx: DeliveryContext;
  providers: ReadonlyMap<string, Provider>;
  learner: Learner;
  renderer: Renderer;
  /** The receivers' connection slots in this process (the engine's): a call takes one of each receiver it carries. */
  connections: ReceiverConnections;
  /** Counts one recipient's attempt (the engine's metrics). */
  counted(m: DispatchJobData, outcome: Outcome, seconds: number): void;
  onStep?: OnStep | undefined;
}

/** A recipient ready to send: its dispatch data, rendered. */
interface Ready {
  m: DispatchJobData;
}

/** The arrival gate refused the group at once: more at one layer than its rate + burst. */
class TooMany extends Error {}
/** The batch's submit mark refused the request before its final bytes. */
class MarkRefused extends Error {}

/** A recipient leaves its batch: a dispatch job of its own, delayed until `untilMs` (0: now). */
async function alone(ctx: DeliveryContext, m: DispatchJobData, untilMs = 0): Promise<void> {
  const delay = Math.max(0, untilMs - ctx.clock());
  await ctx.queues.dispatchOf(m).add('send', m, { jobId: jobIdOf(m), ...(delay > 0 ? { delay } : {}) });
}

/** Places a group's sends together at the arrival gate, waiting up to `worker.lateAfterMs`. */
async function placeTogether(ctx: DeliveryContext, group: readonly Ready[], onStep?: OnStep): Promise<void> {
  const room = await ctx.limiter.arriveBatch({
    arrivals: group.map(({ m }) => arrivalLayers(ctx, m)),
    aheadMs: ctx.config.worker.lateAfterMs,
  });
  if (room.outcome === 'too-many') throw new TooMany(`${room.layer} ${room.key} takes ${room.fits} at once`);
  if (room.outcome === 'beyond') throw new NoRoom(room.waitMs, `no room at the ${room.layer} for ${room.waitMs} ms`);
  for (const { m } of group) onStep?.('placed', m.id);
  if (room.waitMs > 0) await sleep(room.waitMs);
}

/** The checks before a send, per recipient (side by side); those not sendable now are dealt with here. */
async function checked(parts: BatchParts, batch: readonly DispatchJobData[]): Promise<Ready[]> {
  const { ctx, renderer } = parts;
  const each = await Promise.all(
    batch.map(async (m): Promise<Ready | undefined> => {
      parts.onStep?.('taken', m.id);
      if (await standsAside(ctx, m)) return undefined;
      const check = await precheck(ctx, { data: m, delay: (data, untilMs) => alone(ctx, data, untilMs) });
      if (check.kind !== 'send') return undefined;
      const message = await rendered(ctx, renderer, m);
      return message === undefined ? undefined : { m: message };
    }),
  );
  return each.filter((r): r is Ready => r !== undefined);
}

/** The groups one call can carry: by the adapter's key, at most its limit each. */
function grouped(support: BatchSupport, ready: readonly Ready[]): Ready[][] {
  const byKey = new Map<string, Ready[]>();
  for (const r of ready) {
    const key = support.groupKey(r.m);
    byKey.set(key, [...(byKey.get(key) ?? []), r]);
  }
  const groups: Ready[][] = [];
  for (const list of byKey.values())
    for (let i = 0; i < list.length; i += support.maxEntries) groups.push(list.slice(i, i + support.maxEntries));
  return groups;
}

/** One ESP call for a group: placed and marked at the gate, then each recipient's outcome. */
async function call(parts: BatchParts, support: BatchSupport, group: readonly Ready[], batchId: string) {
  const { ctx, onStep } = parts;
  let mark: BatchSubmitResult | undefined;
  let stopped: NoRoom | TooMany | undefined;
  const ids = group.map(({ m }) => m.id);
  const started = performance.now();
  let gateMs = 0;
  const receivers = new Set(group.map(({ m }) => m.receiver));
  const receiver = receivers.size === 1 ? organisationNamed(ctx.config, group[0]!.m.receiver) : undefined;
  const outcomes = await support.send(
    group.map(({ m }) => ({ message: m, messageIdHeader: messageIdHeader(m) })),
    {
      batchId,
      ...(receiver !== undefined ? { receiver } : {}),
      beforeSubmit: async () => {
        const gated = performance.now();
        try {
          for (const id of ids) onStep?.('withheld', id);
          await placeTogether(ctx, group, onStep).catch((e: unknown) => {
            if (e instanceof NoRoom || e instanceof TooMany) stopped = e;
            throw e;
          });
          mark = await ctx.store.markSubmittedBatch(ids, { campaignId: group[0]!.m.campaignId });
          if (mark.result !== 'moved') throw new MarkRefused(`submit refused: ${mark.result}`);
          for (const id of ids) onStep?.('marked', id);
        } finally {
          gateMs = performance.now() - gated;
        }
      },
    },
  );
  const seconds = Math.max(0, performance.now() - started - gateMs) / 1000;
  return { outcomes, mark, stopped, seconds };
}

/** Sends one group, again without those the mark refused; returns what is left to put off. */
async function sendGroup(
  parts: BatchParts,
  support: BatchSupport,
  initial: readonly Ready[],
  batchId: string,
): Promise<{ later: Ready[]; waitMs: number }> {
  const { ctx } = parts;
  let group = [...initial];
  while (group.length > 0) {
    const { outcomes, mark, stopped, seconds } = await call(parts, support, group, batchId);
    if (stopped instanceof TooMany && mark === undefined) {
      // More at one layer than it takes at once: the halves go one after the other.
      const half = Math.ceil(group.length / 2);
      if (group.length === 1) return { later: group, waitMs: 1_000 };
      const a = await sendGroup(parts, support, group.slice(0, half), `${batchId}a`);
      const b = await sendGroup(parts, support, group.slice(half), `${batchId}b`);
      return { later: [...a.later, ...b.later], waitMs: Math.max(a.waitMs, b.waitMs) };
    }
    if (stopped instanceof NoRoom && mark === undefined) return { later: group, waitMs: stopped.waitMs };
    if (mark !== undefined && mark.result !== 'moved') {
      group = await afterRefusal(ctx, group, mark);
      continue;
    }
    const attempts = mark?.result === 'moved' ? mark.attempts : await countedAfter(ctx, group);
    await settleGroup(parts, group, outcomes, attempts, seconds);
    return { later: [], waitMs: 0 };
  }
  return { later: [], waitMs: 0 };
}

/**
 * Each recipient's outcome counted and learnt; those accepted on their first attempt end `sent`
 * together in one script, the others one by one (`settle`).
 */
async function settleGroup(
  parts: BatchParts,
  group: readonly Ready[],
  outcomes: readonly Outcome[],
  attempts: readonly (number | undefined)[],
  seconds: number,
): Promise<void> {
  const { ctx, onStep } = parts;
  const each = group.flatMap(({ m }, i) => {
    const attempt = attempts[i];
    return attempt === undefined ? [] : [{ m, outcome: outcomes[i]!, attempt }];
  });
  await Promise.all(
    each.map(async ({ m, outcome }) => {
      parts.counted(m, outcome, seconds);
      onStep?.('answered', m.id);
      await parts.learner.learn(m, outcome);
    }),
  );
  const sent = each.flatMap((e) =>
    e.attempt === 1 && e.outcome.kind === 'accepted' ? [{ ...e, outcome: e.outcome }] : [],
  );
  await Promise.all([
    sent.length > 0 ? settleSent(ctx, sent) : undefined,
    ...each.filter((e) => !sent.some((s) => s.m === e.m)).map((e) => settle(ctx, e.m, e.outcome, e.attempt)),
  ]);
  for (const { m } of each) onStep?.('settled', m.id);
}

/**
 * The request ended before its final bytes without the mark (refused, reset, the gate
 * failed): each recipient's attempt is counted now; one found final meanwhile is left out.
 */
async function countedAfter(ctx: DeliveryContext, group: readonly Ready[]): Promise<(number | undefined)[]> {
  return Promise.all(
    group.map(async ({ m }) => {
      const marked = await ctx.store.markSending(m.id, { campaignId: m.campaignId });
      return marked.result === 'moved' ? marked.attempts : undefined;
    }),
  );
}

/**
 * The mark refused the whole request: a paused campaign's recipients go back to admission;
 * a recipient final or missing is left out, one another run submitted is looked at again in
 * a second on its own; the others are sent again, in a request without them.
 */
async function afterRefusal(
  ctx: DeliveryContext,
  group: readonly Ready[],
  mark: Exclude<BatchSubmitResult, { result: 'moved' }>,
): Promise<Ready[]> {
  if (mark.result === 'held') {
    for (const { m } of group) await readmit(ctx, m, 'held: campaign paused');
    return [];
  }
  const out = new Set(mark.refused.map((r) => r.index));
  for (const r of mark.refused) if (r.result === 'skipped') await alone(ctx, group[r.index]!.m, ctx.clock() + 1_000);
  return group.filter((_, i) => !out.has(i));
}

/** One connection slot of each receiver a call carries, with their release; undefined when one has none free. */
function takeSlots(connections: ReceiverConnections, group: readonly Ready[]): (() => void) | undefined {
  const releases: (() => void)[] = [];
  const seen = new Set<string>();
  for (const { m } of group) {
    if (seen.has(m.receiver)) continue;
    seen.add(m.receiver);
    const release = connections.take(m);
    if (release === undefined) {
      for (const r of releases) r();
      return undefined;
    }
    releases.push(release);
  }
  return () => {
    for (const r of releases) r();
  };
}

/** Creates the worker's batch delivery, sharing the engine's learner, renderer and metrics. */
export function createBatchDelivery(parts: BatchParts) {
  const { ctx, providers } = parts;

  /** Recipients put off at the arrival gate: the batch waits for the room as one, or they go alone. */
  async function putOff(job: DeliveryBatchJob, later: readonly Ready[], waitMs: number): Promise<DeliveryResult> {
    const until = ctx.clock() + waitMs;
    if (later.length > 1) {
      await job.delay({ batch: later.map(({ m }) => m) }, until);
      return 'delayed';
    }
    for (const { m } of later) await alone(ctx, m, until);
    return 'done';
  }

  return {
    /** Delivers one batch job: every recipient ends in one next state, or leaves the batch. */
    async deliverBatch(job: DeliveryBatchJob, gate: DeliveryGate): Promise<DeliveryResult> {
      const { batch } = job.data;
      const first = batch[0];
      if (first === undefined) return 'done';
      const provider = providers.get(first.provider);
      if (!provider) throw new Error(`no provider ${first.provider} configured in this worker`);
      const ready = await checked(parts, batch);
      const support = provider.batch;
      // What the adapter cannot carry together goes alone, at once.
      const apart = support === undefined ? ready : ready.filter(({ m }) => support.refuses(m) !== undefined);
      for (const { m } of apart) await alone(ctx, m);
      if (support === undefined) return 'done';
      const later: Ready[] = [];
      let waitMs = 0;
      for (const [i, group] of grouped(
        support,
        ready.filter((r) => !apart.includes(r)),
      ).entries()) {
        const release = await gate.acquire(first.priority);
        const slots = takeSlots(parts.connections, group);
        try {
          // Every connection slot of one of its receivers is in use here: it looks again shortly.
          const left =
            slots === undefined
              ? { later: group, waitMs: CONNECTION_WAIT_MS }
              : await sendGroup(parts, support, group, `${job.id}-${i}`);
          later.push(...left.later);
          waitMs = Math.max(waitMs, left.waitMs);
        } finally {
          slots?.();
          release();
        }
      }
      return later.length > 0 ? putOff(job, later, waitMs) : 'done';
    },
  };
}
