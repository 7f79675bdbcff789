import { describe, expect, it } from 'vitest';
import { messageIdHeader, type BatchEntry } from '../src/index.js';
import { adapter, byRecipient, kinds, message, sendBatch, startSandbox } from './support.js';

// The SendGrid adapter's batch: one v3 mail send, a personalization per recipient, through the
// real @sendgrid/mail to the sandbox, which reads each personalization as its own copy.

const entryOf = (to: string, extra: Parameters<typeof message>[1] = {}): BatchEntry => {
  const m = message(to, { subject: `Hello ${to}`, text: `Hi ${to}`, html: `<p>Hi ${to} &amp; co</p>`, ...extra });
  return { message: m, messageIdHeader: messageIdHeader(m) };
};

describe('sendgrid adapter: personalizations', () => {
  it('sends a batch in one request: each recipient its own subject, Message-ID and sluice id; one answer for all', async () => {
    const sandbox = await startSandbox();
    const provider = adapter('sendgrid', sandbox);
    expect(provider.batch?.maxEntries).toBe(1_000);
    const entries = ['a@accept.test', 'b@accept.test', 'c@other.test'].map((to) => entryOf(to));
    const { outcomes, gated } = await sendBatch(provider, entries);
    expect(kinds(outcomes)).toEqual(['accepted', 'accepted', 'accepted']);
    expect(gated).toBe(1);
    const ids = new Set(outcomes.map((o) => (o.kind === 'accepted' ? o.providerMessageId : '')));
    expect(ids.size).toBe(1);
    const got = byRecipient(sandbox);
    expect(got.size).toBe(3);
    for (const e of entries) {
      expect(got.get(e.message.to)).toMatchObject({
        protocol: 'sendgrid',
        subject: e.message.subject,
        messageId: e.messageIdHeader,
        sluiceId: e.message.id,
        tags: expect.objectContaining({ sluice_id: e.message.id, flavour: 'plain' }) as unknown,
      });
    }
    expect(sandbox.stats()).toMatchObject({ accepted: 3, duplicates: 0 });
  });

  it('a 400 naming one personalization ends that recipient alone; the others were not taken and go again', async () => {
    const sandbox = await startSandbox({ scenario: { domains: { 'bounce.test': { bounce: ['gone@bounce.test'] } } } });
    const provider = adapter('sendgrid', sandbox);
    const entries = ['ok@accept.test', 'gone@bounce.test', 'fine@accept.test'].map((to) => entryOf(to));
    const { outcomes } = await sendBatch(provider, entries);
    expect(kinds(outcomes)).toEqual(['deferred', 'rejected', 'deferred']);
    expect(outcomes[1]).toMatchObject({ family: 'bad_recipient' });
    expect(outcomes[1]!.reply).toMatch(/personalizations\.1\.to\.0\.email/);
    expect(outcomes[0]).toMatchObject({ answered: false });
    expect(sandbox.accepted()).toHaveLength(0);
  });

  it('a throttled request is every recipient’s; a dropped connection after the body leaves each ambiguous', async () => {
    const throttled = await startSandbox({ scenario: { domains: { 'busy.test': { rate: 0.001, burst: 1 } } } });
    const p1 = adapter('sendgrid', throttled);
    await sendBatch(p1, [entryOf('first@busy.test')]);
    const { outcomes } = await sendBatch(p1, [entryOf('a@busy.test'), entryOf('b@accept.test')]);
    expect(kinds(outcomes)).toEqual(['throttled', 'throttled']);

    const dropping = await startSandbox({ scenario: { default: { dropAfterData: ['lost@*'] } } });
    const p2 = adapter('sendgrid', dropping);
    const dropped = await sendBatch(p2, [entryOf('lost@drop.test'), entryOf('b@drop.test')]);
    expect(kinds(dropped.outcomes)).toEqual(['ambiguous', 'ambiguous']);
    expect(dropped.gated).toBe(1);
  });

  it('a gate that refuses: SendGrid has none of it, every recipient transient and not submitted', async () => {
    const sandbox = await startSandbox();
    const provider = adapter('sendgrid', sandbox);
    const { outcomes } = await sendBatch(provider, [entryOf('a@accept.test'), entryOf('b@accept.test')], () =>
      Promise.reject(new Error('Redis unreachable')),
    );
    expect(kinds(outcomes)).toEqual(['deferred', 'deferred']);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(sandbox.accepted()).toHaveLength(0);
  });

  it('groups by sender and parts; a recipient whose parts pass 10,000 bytes of substitutions goes alone', async () => {
    const sandbox = await startSandbox();
    const provider = adapter('sendgrid', sandbox);
    const key = (e: BatchEntry): string => provider.batch!.groupKey(e.message);
    expect(key(entryOf('a@x.test'))).toBe(key(entryOf('b@y.test')));
    expect(key(entryOf('a@x.test'))).not.toBe(key(entryOf('a@x.test', { replyTo: 'help@acme.test' })));
    expect(provider.batch!.refuses(entryOf('a@x.test').message)).toBeUndefined();
    expect(provider.batch!.refuses(entryOf('a@x.test', { html: 'x'.repeat(10_000) }).message)).toMatch(/10000 bytes/);
    expect(provider.batch!.refuses(message('r@x.test', { raw: 'Subject: x\r\n\r\nbody' }))).toMatch(/raw MIME/);
  });
});
