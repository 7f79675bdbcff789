import { describe, expect, it } from 'vitest';
import type { Sandbox } from '@sluice/sandbox';
import { messageIdHeader, type BatchEntry, type Provider } from '../src/index.js';
import { adapter, kinds, message, sendBatch, startSandbox } from './support.js';

// The SMTP adapter's batch: one transaction, a RCPT per recipient and one DATA for all, against
// the sandbox's SMTP server (smtp-server), which answers each RCPT as a receiver would.

const CONTENT = { subject: 'The November letter', text: 'News for everyone.', html: '<p>News for everyone.</p>' };

const entryOf = (to: string, content: Partial<typeof CONTENT> = CONTENT): BatchEntry => {
  const m = message(to, { campaignId: 'nov', ...content });
  return { message: m, messageIdHeader: messageIdHeader(m) };
};

const arrivedAt = (sandbox: Sandbox): string[] => sandbox.accepted().map((a) => a.to[0]!);
const smtp = (sandbox: Sandbox, recipients = 100): Provider =>
  adapter('smtp', sandbox, { recipientsPerTransaction: recipients });

describe('smtp adapter: many recipients a transaction', () => {
  it('sends one message to every recipient: each arrives once, with one Message-ID and a To naming none', async () => {
    const sandbox = await startSandbox();
    const provider = smtp(sandbox, 3);
    expect(provider.batch?.maxEntries).toBe(3);
    const entries = ['a@accept.test', 'b@accept.test', 'c@accept.test'].map((to) => entryOf(to));
    const { outcomes, gated } = await sendBatch(provider, entries);
    expect(kinds(outcomes)).toEqual(['accepted', 'accepted', 'accepted']);
    expect(gated).toBe(1);
    const ids = new Set(outcomes.map((o) => (o.kind === 'accepted' ? o.providerMessageId : '')));
    expect(ids.size).toBe(1);
    expect(arrivedAt(sandbox).sort()).toEqual(['a@accept.test', 'b@accept.test', 'c@accept.test']);
    for (const a of sandbox.accepted()) {
      expect(a).toMatchObject({
        protocol: 'smtp',
        messageId: entries[0]!.messageIdHeader,
        sluiceId: undefined,
        subject: CONTENT.subject,
        tags: { sluice_batch: 'b-1' },
      });
    }
    expect(sandbox.stats()).toMatchObject({ accepted: 3, duplicates: 0 });
    await provider.close();
  });

  it('ends exactly the refused RCPTs, each with its own reply; the others are accepted', async () => {
    const sandbox = await startSandbox({
      scenario: { domains: { 'mixed.test': { bounce: ['gone@mixed.test'], defer: ['full@mixed.test'] } } },
    });
    const provider = smtp(sandbox);
    const entries = ['ok@mixed.test', 'gone@mixed.test', 'full@mixed.test', 'fine@mixed.test'].map((to) => entryOf(to));
    const { outcomes } = await sendBatch(provider, entries);
    expect(kinds(outcomes)).toEqual(['accepted', 'rejected', 'deferred', 'accepted']);
    expect(outcomes[1]).toMatchObject({ family: 'bad_recipient', suppress: true });
    expect(outcomes[1]!.reply).toMatch(/^550 .*does not exist/);
    expect(outcomes[2]!.reply).toMatch(/^452 .*over quota/);
    expect(arrivedAt(sandbox).sort()).toEqual(['fine@mixed.test', 'ok@mixed.test']);
    await provider.close();
  });

  it('every RCPT refused: no data goes, each recipient ends with its own reply', async () => {
    const sandbox = await startSandbox({
      scenario: { domains: { 'mixed.test': { bounce: ['gone@mixed.test'], defer: ['full@mixed.test'] } } },
    });
    const provider = smtp(sandbox);
    const { outcomes, gated } = await sendBatch(provider, [entryOf('gone@mixed.test'), entryOf('full@mixed.test')]);
    expect(kinds(outcomes)).toEqual(['rejected', 'deferred']);
    expect(gated).toBe(0);
    expect(sandbox.accepted()).toHaveLength(0);
    await provider.close();
  });

  it('a connection dropped after the data leaves every recipient of the transaction ambiguous', async () => {
    const sandbox = await startSandbox({ scenario: { default: { dropAfterData: ['lost@*'] } } });
    const provider = smtp(sandbox);
    const entries = ['a@drop.test', 'lost@drop.test', 'b@drop.test'].map((to) => entryOf(to));
    const { outcomes, gated } = await sendBatch(provider, entries);
    expect(kinds(outcomes)).toEqual(['ambiguous', 'ambiguous', 'ambiguous']);
    expect(gated).toBe(1);
    await provider.close();
  });

  it('a gate that refuses: the receiver gets an unterminated message, every recipient transient and not submitted', async () => {
    const sandbox = await startSandbox();
    const provider = smtp(sandbox);
    const entries = ['a@accept.test', 'b@accept.test'].map((to) => entryOf(to));
    const { outcomes } = await sendBatch(provider, entries, () => Promise.reject(new Error('Redis unreachable')));
    expect(kinds(outcomes)).toEqual(['deferred', 'deferred']);
    expect(outcomes[0]).toMatchObject({ answered: false });
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(sandbox.accepted()).toHaveLength(0);
    await provider.close();
  });

  it('shares a transaction only within one domain and one rendered message; off by default', async () => {
    const sandbox = await startSandbox();
    const provider = smtp(sandbox);
    const key = (e: BatchEntry): string => provider.batch!.groupKey(e.message);
    expect(key(entryOf('a@x.test'))).toBe(key(entryOf('B@X.test')));
    expect(key(entryOf('a@x.test'))).not.toBe(key(entryOf('a@y.test')));
    expect(key(entryOf('a@x.test'))).not.toBe(key(entryOf('b@x.test', { ...CONTENT, text: 'News for b.' })));
    expect(provider.batch!.refuses(message('r@x.test', { raw: 'Subject: x\r\n\r\nbody' }))).toMatch(/raw MIME/);
    expect(
      provider.batch!.refuses(message('t@x.test', { subject: undefined, template: { name: 'welcome', data: {} } })),
    ).toMatch(/template/);
    expect(adapter('smtp', sandbox).batch).toBeUndefined();
    await provider.close();
  });
});
