import { expect, it } from 'vitest';
import { parseConfig, parseMessage } from '@sluice/core';
import { explain } from '@sluice/ops';
import { createStore, messageId } from '@sluice/store';
import { useRedisPrefix } from '../../../test/support/redis-prefix.js';

const r = useRedisPrefix();

it('tells an unconfirmed message as one that may have been delivered, and a refusal after an ambiguous attempt as such', async () => {
  const { redis, keys } = r;
  const config = parseConfig({
    redis: { url: r.url, prefix: r.prefix },
    providers: { ses: { kind: 'ses', rate: 10 } },
  });
  const store = createStore({ redis, keys });
  const ambiguousThen = async (state: 'rejected' | 'expired') => {
    const m = {
      ...parseMessage({ from: 'a@acme.test', to: 'b@example.test', subject: 's', text: 't' }),
      id: messageId('default'),
      acceptedAt: Date.now(),
    };
    await store.accept(m);
    await store.transition(m.id, 'sending', { attempt: true });
    await store.transition(m.id, 'submitted', { ambiguous: true });
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
