import { describe, expect, it } from 'vitest';
import { messageIdHeader, type BatchEntry, type Provider } from '../src/index.js';
import { adapter, byRecipient, kinds, message, sendBatch as send, startSandbox } from './support.js';

// The SES adapter's batch call (SendBulkEmail) against the sandbox, which speaks it as the SDK
// expects (apps/sandbox/test/ses-bulk.test.ts): one call, an outcome per recipient.

/** A batch call whose id names its first recipient, as the tests read it back. */
const sendBatch = (provider: Provider, entries: BatchEntry[], gate?: () => Promise<void>) =>
  send(provider, entries, gate, `b-${entries[0]!.message.id}`);

const entryOf = (to: string, subject = `Hello ${to}`): BatchEntry => {
  const m = message(to, { subject, text: `Hi ${to}`, html: `<p>Hi ${to} &amp; co</p>` });
  return { message: m, messageIdHeader: messageIdHeader(m) };
};

describe('ses adapter: SendBulkEmail', () => {
  it('sends a batch in one call, each recipient with its own rendered parts, Message-ID and sluice id', async () => {
    const sandbox = await startSandbox();
    const provider = adapter('ses', sandbox);
    expect(provider.batch?.maxEntries).toBe(50);
    const entries = ['a@accept.test', 'b@accept.test', 'c@other.test'].map((to) => entryOf(to));
    const { outcomes, gated } = await sendBatch(provider, entries);
    expect(kinds(outcomes)).toEqual(['accepted', 'accepted', 'accepted']);
    expect(gated).toBe(1);
    const ids = outcomes.map((o) => (o.kind === 'accepted' ? o.providerMessageId : ''));
    expect(new Set(ids).size).toBe(3);
    const got = byRecipient(sandbox);
    for (const [i, e] of entries.entries()) {
      expect(got.get(e.message.to)).toMatchObject({
        protocol: 'ses',
        subject: e.message.subject,
        messageId: e.messageIdHeader,
        sluiceId: e.message.id,
        providerMessageId: ids[i],
        tags: expect.objectContaining({ sluice_batch: `b-${entries[0]!.message.id}`, flavour: 'plain' }) as unknown,
      });
    }
    expect(sandbox.stats().duplicates).toBe(0);
  });

  it('ends exactly the refused entries: a bounced address rejected, a throttled one throttled, the rest accepted', async () => {
    const sandbox = await startSandbox({
      scenario: {
        domains: { 'bounce.test': { bounce: ['gone@bounce.test'] }, 'busy.test': { rate: 0.001, burst: 1 } },
      },
    });
    const provider = adapter('ses', sandbox);
    const entries = ['ok@accept.test', 'gone@bounce.test', 'one@busy.test', 'two@busy.test', 'fine@accept.test'].map(
      (to) => entryOf(to),
    );
    const { outcomes } = await sendBatch(provider, entries);
    expect(kinds(outcomes)).toEqual(['accepted', 'rejected', 'accepted', 'throttled', 'accepted']);
    expect(outcomes[1]).toMatchObject({ family: 'bad_recipient', suppress: true, rule: 'http.suppressed-address' });
    expect(outcomes[1]!.reply).toMatch(/MESSAGE_REJECTED.*gone@bounce\.test/);
    expect(outcomes[3]).toMatchObject({ family: 'throttled', scope: 'provider' });
    expect([...byRecipient(sandbox).keys()].sort()).toEqual(['fine@accept.test', 'ok@accept.test', 'one@busy.test']);
  });

  it('a dropped connection after the final bytes leaves every recipient ambiguous', async () => {
    const sandbox = await startSandbox({ scenario: { default: { dropAfterData: ['lost@*'] } } });
    const provider = adapter('ses', sandbox);
    const entries = ['a@drop.test', 'lost@drop.test', 'b@drop.test'].map((to) => entryOf(to));
    const { outcomes, gated } = await sendBatch(provider, entries);
    expect(kinds(outcomes)).toEqual(['ambiguous', 'ambiguous', 'ambiguous']);
    expect(gated).toBe(1);
  });

  it('a gate that refuses: the ESP has none of the batch, every recipient transient and not submitted', async () => {
    const sandbox = await startSandbox();
    const provider = adapter('ses', sandbox);
    const entries = ['a@accept.test', 'b@accept.test'].map((to) => entryOf(to));
    const { outcomes } = await sendBatch(provider, entries, () => Promise.reject(new Error('Redis unreachable')));
    expect(kinds(outcomes)).toEqual(['deferred', 'deferred']);
    expect(outcomes[0]).toMatchObject({ family: 'transient_system', answered: false });
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(sandbox.accepted()).toHaveLength(0);
  });

  it('an error for the whole call is every recipient’s, and an SES template goes by name', async () => {
    const sandbox = await startSandbox();
    const provider = adapter('ses', sandbox);
    const templated = ['a@accept.test', 'b@accept.test'].map((to) => {
      const m = message(to, {
        subject: undefined,
        text: undefined,
        html: undefined,
        template: { name: 'nope', data: { n: to } },
      });
      return { message: m, messageIdHeader: messageIdHeader(m) };
    });
    // The sandbox stores no such template: SES answers each entry TEMPLATE_NOT_FOUND.
    const { outcomes } = await sendBatch(provider, templated);
    expect(kinds(outcomes)).toEqual(['rejected', 'rejected']);
    expect(provider.batch!.refuses(message('x@accept.test', { raw: 'Subject: x\r\n\r\nbody' }))).toMatch(/raw MIME/);
    expect(provider.batch!.refuses(templated[0]!.message)).toBeUndefined();
    expect(provider.batch!.groupKey(templated[0]!.message)).not.toBe(
      provider.batch!.groupKey(entryOf('c@x.test').message),
    );
  });
});
