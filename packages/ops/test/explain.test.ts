import { expect, it } from 'vitest';
import { jobIdOf, parseConfig, parseMessage } from '@sluice/core';
import { explain } from '@sluice/ops';
import { createOutcomes, createQueues, createStore, injectedId, messageId } from '@sluice/store';
import { useRedisPrefix } from '../../../test/support/redis-prefix.js';

const r = useRedisPrefix();

it('tells an unconfirmed message as one that may have been delivered, and a refusal after an ambiguous attempt as such', async () => {
  const { redis, keys } = r;
  const config = parseConfig({
    redis: { url: r.url, prefix: r.prefix },
    providers: { ses: { kind: 'ses', sandbox: true, rate: 10 } },
  });
  const store = createStore({ redis, keys });
  const ambiguousThen = async (state: 'rejected' | 'expired') => {
    const m = {
      ...parseMessage({ from: 'a@acme.test', to: 'b@example.test', subject: 's', text: 't' }),
      id: messageId('default'),
      acceptedAt: Date.now(),
    };
    await store.accept(m);
    await store.markSubmitted(m.id);
    await store.markAmbiguous(m.id);
    const outcome = state === 'rejected' ? 'policy_block' : 'attempts_exhausted: 3 × ambiguous';
    await store.finalize(m.id, state, {
      provider: 'ses',
      outcome,
      ifAmbiguous: state === 'expired' ? 'unconfirmed' : undefined,
    });
    return explain({ config, redis, keys }, m.id);
  };
  const unconfirmed = await ambiguousThen('expired');
  expect(unconfirmed.state).toBe('unconfirmed');
  expect(unconfirmed.summary).toMatch(
    /^unconfirmed at .* via ses: 1 attempt\(s\) submitted in full and never answered, .*it may have been delivered \(attempts_exhausted/,
  );
  const rejected = await ambiguousThen('rejected');
  expect(rejected.summary).toMatch(/^rejected at .*: policy_block .*that copy may have arrived\)$/);
});

it('explains a compacted campaign message from what is kept of it', async () => {
  const { redis, keys } = r;
  const config = parseConfig({ redis: { url: r.url, prefix: r.prefix } });
  const store = createStore({ redis, keys });
  await redis.hset(keys.campaign('news'), { createdAt: '1', tenantId: 'acme', priority: 'low' });
  const id = injectedId('news', 3);
  const m = { ...parseMessage({ from: 'a@acme.test', to: 'b@example.test', subject: 's', text: 't' }) };
  await store.accept({ ...m, priority: 'low', campaignId: 'news', id, acceptedAt: Date.now() });
  await store.finalize(id, 'sent', { campaignId: 'news', provider: 'ses', providerMessageId: 'pm-3' });
  await createOutcomes({ redis, keys }).settle(config.delivery.retention);
  const told = await explain({ config, redis, keys }, id);
  expect(told.state).toBe('sent');
  expect(told.summary).toMatch(/^sent at .* via ses \(provider id pm-3\) \(compact record: /);
});

it('tells an admitted message (its dispatch job waiting, its record still queued) from one waiting for admission', async () => {
  const { redis, keys } = r;
  const config = parseConfig({ redis: { url: r.url, prefix: r.prefix } });
  const store = createStore({ redis, keys });
  const queues = createQueues({ redis, keys });
  try {
    const accepted = async () => {
      const m = {
        ...parseMessage({ from: 'a@acme.test', to: 'b@example.test', subject: 's', text: 't' }),
        id: messageId('default'),
        acceptedAt: Date.now(),
      };
      await store.accept(m);
      return m;
    };
    const waiting = await accepted();
    expect((await explain({ config, redis, keys }, waiting.id)).summary).toMatch(/^waiting in \{intake-normal\}/);
    // Given back once (hop 1), then admitted again: its dispatch job is `<id>-1`.
    const admitted = await accepted();
    await store.markRequeued(admitted.id, { hop: 1 });
    await queues
      .dispatch('normal')
      .add('send', { id: admitted.id }, { jobId: jobIdOf({ id: admitted.id, hop: 1 }), delay: 60_000 });
    expect((await explain({ config, redis, keys }, admitted.id)).summary).toMatch(
      /^admitted; waiting in dispatch-normal-\{b32\.76\} for its slot/,
    );
  } finally {
    await queues.close();
  }
});
