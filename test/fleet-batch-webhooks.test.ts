import { pino } from 'pino';
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { createApi, type Api } from '@sluice/api';
import { parseConfig } from '@sluice/core';
import { waitFor } from './support/fleet.js';
import { useFleet } from './support/use-fleet.js';

// Batches over an ESP that answers once for all (docs/design/batches.md): a campaign sent by
// Mailgun in batch calls, the sandbox bouncing some recipients later by signed webhook; each
// event names its own recipient's sluice id (`v:sluice_id` from its recipient variables), so
// the api settles and suppresses exactly those, none of the batch's others.
const providers = { mg: { kind: 'mailgun', sandbox: true, rate: 200, burst: 20, domain: 'mg.acme.test' } };
const fleet = useFleet({ schedulers: 1, workers: 1, config: { providers, defaultProvider: 'mg' } });

let api: Api;

beforeAll(async () => {
  const { sandbox, prefix } = fleet();
  const keys = sandbox.webhookKeys();
  api = createApi({
    config: parseConfig({
      redis: { url: inject('redisUrl'), prefix },
      providers,
      defaultProvider: 'mg',
      api: { port: 0, webhooks: { mailgun: { signingKey: keys.mailgunSigningKey } } },
    }),
    logger: pino({ level: 'silent' }),
  });
  const address = await api.listen();
  sandbox.setScenario({
    // Taken with the batch and bounced later: every gone.test address, and one on the list.
    domains: { 'gone.test': { bounceRate: 1 }, 'd1.test': { bounce: ['u7@d1.test'] } },
    webhooks: { mailgun: { url: `${address}/webhooks/mailgun` }, reportDelayMs: 50 },
  });
});

afterAll(async () => {
  await api?.close();
});

it('sends a campaign in Mailgun batch calls; a bounce by webhook settles and suppresses only its own recipient', async () => {
  const { client, sandbox } = fleet();
  await client.campaigns.create({
    id: 'letters',
    priority: 'low',
    content: { from: 'Acme <news@acme.test>', subject: 'Hello {{n}}', text: 'Item {{n}}' },
  });
  await client.campaigns.launch('letters', { total: 60, sample: { 'd0.test': 1 } });
  const to = (i: number): string => (i % 20 === 3 ? `x${i}@gone.test` : `u${i}@d${i % 2}.test`);
  async function* recipients() {
    for (let i = 0; i < 60; i++) yield { to: to(i), data: { n: i } };
  }
  await client.campaigns.inject('letters', recipients());
  await waitFor(async () => (await client.campaigns.status('letters')).pending === 0, 30_000, 'every recipient final');
  await waitFor(() => sandbox.stats().webhooksSent === 4, 10_000, 'the four bounces reported');

  const accepted = sandbox.accepted();
  // Every recipient but the listed bounce was taken once (gone.test's bounce after it was taken),
  // with its own subject and sluice id.
  expect(accepted).toHaveLength(59);
  expect(new Set(accepted.map((a) => a.sluiceId)).size).toBe(59);
  expect(accepted.some((a) => a.to[0] === 'u7@d1.test')).toBe(false);
  expect(accepted.find((a) => a.sluiceId === 'letters_8')).toMatchObject({ subject: 'Hello 8', to: ['u8@d0.test'] });
  const calls = new Set(accepted.map((a) => a.providerMessageId)).size;
  console.log(`mailgun batches: ${accepted.length} recipients in ${calls} calls`);
  expect(calls).toBeLessThan(accepted.length / 4);

  const bounced = ['x3@gone.test', 'x23@gone.test', 'x43@gone.test', 'u7@d1.test'];
  for (const address of bounced)
    expect(
      await waitFor(() => client.suppressions.get('default', address), 5_000, `${address} suppressed`),
    ).toMatchObject({ source: 'bounce', provider: 'mailgun' });
  for (const address of ['u2@d0.test', 'u8@d0.test', 'u9@d1.test'])
    expect(await client.suppressions.get('default', address)).toBeNull();
  expect(sandbox.stats()).toMatchObject({ webhooksSent: 4, webhooksFailed: 0, duplicates: 0 });
});
