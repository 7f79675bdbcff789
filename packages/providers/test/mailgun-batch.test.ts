import { describe, expect, it } from 'vitest';
import { messageIdHeader, type BatchEntry } from '../src/index.js';
import { adapter, byRecipient, kinds, message, sendBatch, startSandbox } from './support.js';

// The Mailgun adapter's batch: one messages call with a `to` per recipient and their
// recipient variables, through the real mailgun.js to the sandbox, which sends (records) one
// email per recipient with its own subject and sluice id, as Mailgun does.

const entryOf = (to: string, extra: Parameters<typeof message>[1] = {}): BatchEntry => {
  const m = message(to, { subject: `Hello ${to}`, text: `Hi ${to}`, html: `<p>Hi ${to}</p>`, ...extra });
  return { message: m, messageIdHeader: messageIdHeader(m) };
};

describe('mailgun adapter: batch sending', () => {
  it('sends a batch in one call: each recipient an email of its own with its subject and sluice id; one id for all', async () => {
    const sandbox = await startSandbox();
    const provider = adapter('mailgun', sandbox);
    expect(provider.batch?.maxEntries).toBe(1_000);
    const entries = ['a@accept.test', 'b@accept.test', 'c@other.test'].map((to) => entryOf(to));
    const { outcomes, gated } = await sendBatch(provider, entries);
    expect(kinds(outcomes)).toEqual(['accepted', 'accepted', 'accepted']);
    expect(gated).toBe(1);
    expect(new Set(outcomes.map((o) => (o.kind === 'accepted' ? o.providerMessageId : ''))).size).toBe(1);
    const got = byRecipient(sandbox);
    expect(got.size).toBe(3);
    for (const e of entries) {
      expect(got.get(e.message.to)).toMatchObject({
        protocol: 'mailgun',
        subject: e.message.subject,
        sluiceId: e.message.id,
        tags: expect.objectContaining({ sluice_id: e.message.id, flavour: 'plain', 'tag:spring': '' }) as unknown,
      });
    }
    expect(sandbox.stats()).toMatchObject({ accepted: 3, duplicates: 0 });
  });

  it('takes a recipient that bounces with the others, and reports its bounce by webhook later', async () => {
    const sandbox = await startSandbox({ scenario: { domains: { 'bounce.test': { bounce: ['gone@bounce.test'] } } } });
    const provider = adapter('mailgun', sandbox);
    const entries = ['ok@accept.test', 'gone@bounce.test'].map((to) => entryOf(to));
    const { outcomes } = await sendBatch(provider, entries);
    expect(kinds(outcomes)).toEqual(['accepted', 'accepted']);
    expect([...byRecipient(sandbox).keys()]).toEqual(['ok@accept.test']);
    expect(sandbox.stats().byDomain['bounce.test']).toMatchObject({ rejected: 1, accepted: 0 });
  });

  it('a throttled call is every recipient’s; an address twice goes again on its own, unsent', async () => {
    const sandbox = await startSandbox({ scenario: { domains: { 'busy.test': { rate: 0.001, burst: 1 } } } });
    const provider = adapter('mailgun', sandbox);
    await sendBatch(provider, [entryOf('first@busy.test')]);
    const { outcomes } = await sendBatch(provider, [entryOf('a@busy.test'), entryOf('b@accept.test')]);
    expect(kinds(outcomes)).toEqual(['throttled', 'throttled']);

    const fresh = await startSandbox();
    const p2 = adapter('mailgun', fresh);
    const twice = await sendBatch(p2, [entryOf('a@accept.test'), entryOf('a@accept.test'), entryOf('b@accept.test')]);
    expect(kinds(twice.outcomes)).toEqual(['accepted', 'deferred', 'accepted']);
    expect(twice.outcomes[1]).toMatchObject({ answered: false });
    expect(fresh.accepted()).toHaveLength(2);
  });

  it('a gate that refuses: Mailgun has none of it; a connection dropped after the body leaves each ambiguous', async () => {
    const sandbox = await startSandbox();
    const provider = adapter('mailgun', sandbox);
    const refused = await sendBatch(provider, [entryOf('a@accept.test'), entryOf('b@accept.test')], () =>
      Promise.reject(new Error('Redis unreachable')),
    );
    expect(kinds(refused.outcomes)).toEqual(['deferred', 'deferred']);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(sandbox.accepted()).toHaveLength(0);

    const dropping = await startSandbox({ scenario: { default: { dropAfterData: ['lost@*'] } } });
    const p2 = adapter('mailgun', dropping);
    const dropped = await sendBatch(p2, [entryOf('lost@drop.test'), entryOf('b@drop.test')]);
    expect(kinds(dropped.outcomes)).toEqual(['ambiguous', 'ambiguous']);
  });

  it('groups by sender, headers, tags and parts; raw MIME and Mailgun templates go alone', async () => {
    const sandbox = await startSandbox();
    const provider = adapter('mailgun', sandbox);
    const key = (e: BatchEntry): string => provider.batch!.groupKey(e.message);
    expect(key(entryOf('a@x.test'))).toBe(key(entryOf('b@y.test')));
    expect(key(entryOf('a@x.test'))).not.toBe(key(entryOf('a@x.test', { tags: { flavour: 'spicy' } })));
    expect(provider.batch!.refuses(message('r@x.test', { raw: 'Subject: x\r\n\r\nbody' }))).toMatch(/raw MIME/);
    expect(provider.batch!.refuses(message('t@x.test', { template: { name: 'welcome', data: {} } }))).toMatch(
      /template/,
    );
  });
});
