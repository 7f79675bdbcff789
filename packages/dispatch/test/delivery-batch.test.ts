import type { DispatchBatchData, DispatchJobData } from '@sluice/core';
import { describe, expect, it } from 'vitest';
import type { DeliveryBatchJob } from '@sluice/dispatch';
import { injectedId } from '@sluice/store';
import { useRedisPrefix } from '../../../test/support/redis-prefix.js';
import { sentTo, useDelivery, type Setup } from './delivery-setup.js';

// The worker's batch path (docs/design/batches.md), in process on real Redis: recipients of one
// campaign block in one dispatch job, sent through the real SES adapter's SendBulkEmail to the
// sandbox, each ending on its own outcome.

const r = useRedisPrefix();
const { setup, admitted } = useDelivery(r);
const SES = {
  defaultProvider: 'ses',
  providers: { ses: { kind: 'ses', sandbox: true, rate: 1000, burst: 100, concurrency: 4 } },
};

/** Recipients at positions 0… of campaign `spring` (one block: one message home), admitted to SES. */
async function recipients(s: Setup, to: string[], extra: Partial<DispatchJobData> = {}): Promise<DispatchJobData[]> {
  const out: DispatchJobData[] = [];
  for (const [position, address] of to.entries())
    out.push(await admitted(s, address, { id: injectedId('spring', position), provider: 'ses', ...extra }));
  return out;
}

/** A batch job of `batch`; a delay (the batch put off as one) is kept in `delayed`. */
function batchJob(
  batch: DispatchJobData[],
  delayed: { data: DispatchBatchData; untilMs: number }[] = [],
): DeliveryBatchJob {
  return {
    id: `batch-${batch[0]!.id}`,
    data: { batch },
    delay: async (data, untilMs) => void delayed.push({ data, untilMs }),
  };
}

const states = async (s: Setup, batch: DispatchJobData[]) =>
  Promise.all(batch.map(async (m) => (await s.store.get(m.id))?.state));

describe('a dispatch batch through the worker', () => {
  it('sends the batch in one call and ends each recipient on its own answer', async () => {
    const s = await setup({ domains: { 'bounce.test': { bounce: ['gone@bounce.test'] } } }, SES);
    const batch = await recipients(s, ['a@accept.test', 'gone@bounce.test', 'b@accept.test', 'c@other.test']);
    expect(await s.delivery.deliverBatch(batchJob(batch), s.gate)).toBe('done');
    expect(await states(s, batch)).toEqual(['sent', 'rejected', 'sent', 'sent']);
    // One SendBulkEmail: every accepted recipient carries the batch's tag.
    const calls = new Set(s.sandbox.accepted().map((a) => a.tags.sluice_batch));
    expect([...calls]).toEqual(['batch-spring_0-0']);
    expect(await s.store.get(batch[1]!.id)).toMatchObject({ lastOutcome: 'bad_recipient' });
    expect(await s.store.suppressed('acme', 'gone@bounce.test')).not.toBeNull();
    expect((await s.store.get(batch[2]!.id))?.providerMessageId).toBeTruthy();
    expect(s.counted.attempts.map((a) => a.labels.outcome).sort()).toEqual([
      'accepted',
      'accepted',
      'accepted',
      'rejected',
    ]);
    expect(s.gate.inUse).toBe(0);
  });

  it('leaves out a recipient that went final before the mark, and sends the others once without it', async () => {
    const s = await setup({}, SES);
    const batch = await recipients(s, ['a@accept.test', 'b@accept.test', 'c@accept.test']);
    // Cancelled while the request waits at its gate: the mark refuses the whole request, which is
    // never completed, and the two others go in a request of their own.
    let cancelled = false;
    s.onStep = (step, id) => {
      if (step === 'withheld' && id === batch[1]!.id && !cancelled) {
        cancelled = true;
        void s.store.finalize(batch[1]!.id, 'cancelled', { campaignId: 'spring' });
      }
    };
    await s.delivery.deliverBatch(batchJob(batch), s.gate);
    expect(await states(s, batch)).toEqual(['sent', 'cancelled', 'sent']);
    expect(sentTo(s, 'a@accept.test')).toBe(1);
    expect(sentTo(s, 'b@accept.test')).toBe(0);
    expect(s.sandbox.stats().duplicates).toBe(0);
    expect((await s.store.get(batch[0]!.id))?.attempts).toBe(1);
  });

  it('flags every recipient ambiguous when the connection drops after the final bytes', async () => {
    const s = await setup({ default: { dropAfterData: ['lost@*'] } }, SES);
    const batch = await recipients(s, ['a@drop.test', 'lost@drop.test', 'b@drop.test']);
    await s.delivery.deliverBatch(batchJob(batch), s.gate);
    // Each counted ambiguous once, and ended as its class says of an ambiguous attempt: normal
    // mail is counted as sent (delivery.onAmbiguous), never sent a second time.
    expect(s.config.delivery.onAmbiguous.normal).toBe('assume-sent');
    for (const m of batch)
      expect(await s.store.get(m.id)).toMatchObject({
        state: 'sent',
        ambiguous: 1,
        attempts: 1,
        lastOutcome: 'ambiguous',
      });
    expect(s.sandbox.stats()).toMatchObject({ duplicates: 0 });
  });

  it('gives a paused campaign’s batch back to its queue, no attempt spent', async () => {
    const s = await setup({}, SES);
    const batch = await recipients(s, ['a@accept.test', 'b@accept.test']);
    await s.store.setCampaignPaused('spring', true);
    await s.delivery.deliverBatch(batchJob(batch), s.gate);
    expect(await states(s, batch)).toEqual(['queued', 'queued']);
    expect((await s.queues.campaign('spring').getWaiting()).map((j) => j.id).sort()).toEqual(
      batch.map((m) => `${m.id}-1`).sort(),
    );
    expect(s.sandbox.accepted()).toHaveLength(0);
  });

  it('splits a batch above a receiver’s rate + burst, and puts off as one batch what has no room yet', async () => {
    const s = await setup({}, SES);
    // Rate 2 and burst 1: three arrive at once, then nothing for a second.
    const batch = await recipients(
      s,
      Array.from({ length: 6 }, (_, i) => `u${i}@small.test`),
      { receiverLimit: { rate: 2, burst: 1 } },
    );
    const delayed: { data: DispatchBatchData; untilMs: number }[] = [];
    expect(await s.delivery.deliverBatch(batchJob(batch, delayed), s.gate)).toBe('delayed');
    expect(s.sandbox.accepted().map((a) => a.to[0])).toEqual(['u0@small.test', 'u1@small.test', 'u2@small.test']);
    expect(await states(s, batch)).toEqual(['sent', 'sent', 'sent', 'dispatched', 'dispatched', 'dispatched']);
    expect(delayed).toHaveLength(1);
    expect(delayed[0]!.data.batch.map((m) => m.id)).toEqual(batch.slice(3).map((m) => m.id));
    expect(delayed[0]!.untilMs - s.now).toBeGreaterThan(500);
  });
});

describe('a dispatch batch over SMTP: one transaction a domain', () => {
  const SMTP = {
    defaultProvider: 'smtp',
    providers: {
      smtp: { kind: 'smtp', sandbox: true, rate: 1000, burst: 100, concurrency: 4, recipientsPerTransaction: 10 },
    },
  };

  it('sends the recipients of one domain in one transaction; a RCPT refused ends alone, the others sent', async () => {
    const s = await setup({ domains: { 'mixed.test': { bounce: ['gone@mixed.test'] } } }, SMTP);
    const batch = await recipients(s, ['a@mixed.test', 'gone@mixed.test', 'b@mixed.test', 'c@other.test'], {
      provider: 'smtp',
    });
    expect(await s.delivery.deliverBatch(batchJob(batch), s.gate)).toBe('done');
    expect(await states(s, batch)).toEqual(['sent', 'rejected', 'sent', 'sent']);
    expect(await s.store.get(batch[1]!.id)).toMatchObject({ lastOutcome: 'bad_recipient' });
    expect(await s.store.suppressed('acme', 'gone@mixed.test')).not.toBeNull();
    // Two transactions: mixed.test's two accepted RCPTs share one queue id, other.test has its own.
    const queueIds = new Map(s.sandbox.accepted().map((a) => [a.to[0], a.providerMessageId]));
    expect(queueIds.get('a@mixed.test')).toBe(queueIds.get('b@mixed.test'));
    expect(queueIds.get('c@other.test')).not.toBe(queueIds.get('a@mixed.test'));
    expect((await s.store.get(batch[2]!.id))?.providerMessageId).toBe(queueIds.get('b@mixed.test'));
    expect(s.sandbox.stats()).toMatchObject({ accepted: 3, duplicates: 0 });
    expect(s.gate.inUse).toBe(0);
  });

  it('flags every recipient of a transaction ambiguous when the connection drops after the data', async () => {
    const s = await setup({ default: { dropAfterData: ['lost@*'] } }, SMTP);
    const batch = await recipients(s, ['a@drop.test', 'lost@drop.test', 'b@drop.test'], { provider: 'smtp' });
    await s.delivery.deliverBatch(batchJob(batch), s.gate);
    for (const m of batch) expect(await s.store.get(m.id)).toMatchObject({ state: 'sent', ambiguous: 1, attempts: 1 });
    expect(s.sandbox.stats()).toMatchObject({ accepted: 3, duplicates: 0 });
  });
});

describe('a dispatch batch over SendGrid: one request, one answer', () => {
  const SENDGRID = {
    defaultProvider: 'sg',
    providers: { sg: { kind: 'sendgrid', sandbox: true, rate: 1000, burst: 100, concurrency: 4 } },
  };

  it('sends the batch in one request, every recipient accepted on its answer with the request’s id', async () => {
    const s = await setup({}, SENDGRID);
    const batch = await recipients(s, ['a@accept.test', 'b@accept.test', 'c@other.test'], { provider: 'sg' });
    expect(await s.delivery.deliverBatch(batchJob(batch), s.gate)).toBe('done');
    expect(await states(s, batch)).toEqual(['sent', 'sent', 'sent']);
    const ids = new Set(s.sandbox.accepted().map((a) => a.providerMessageId));
    expect(ids.size).toBe(1);
    expect((await s.store.get(batch[1]!.id))?.providerMessageId).toBe([...ids][0]);
    expect(s.sandbox.stats()).toMatchObject({ accepted: 3, duplicates: 0 });
  });

  it('a request refused for one recipient ends that one; the others, not taken, are retried', async () => {
    const s = await setup({ domains: { 'bounce.test': { bounce: ['gone@bounce.test'] } } }, SENDGRID);
    const batch = await recipients(s, ['a@accept.test', 'gone@bounce.test', 'b@accept.test'], { provider: 'sg' });
    await s.delivery.deliverBatch(batchJob(batch), s.gate);
    expect(await states(s, batch)).toEqual(['retrying', 'rejected', 'retrying']);
    expect(await s.store.suppressed('acme', 'gone@bounce.test')).not.toBeNull();
    expect(s.sandbox.accepted()).toHaveLength(0);
  });
});
