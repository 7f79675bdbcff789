import { pino } from 'pino';
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { createApi, type Api } from '@sluice/api';
import { createKeys, parseConfig } from '@sluice/core';
import { createSignals, type Signals } from '@sluice/throttle';
import { waitFor } from './support/fleet.js';
import { useFleet } from './support/use-fleet.js';

// The feedback loop end to end: the sandbox's receivers complain about and bounce what
// SendGrid accepted, the sandbox posts SendGrid's signed Event Webhook to the api, and the
// api suppresses the recipients and counts the signals the governor will read.
const providers = { sg: { kind: 'sendgrid', sandbox: true, rate: 50, burst: 10 } };
const fleet = useFleet({
  schedulers: 1,
  workers: 1,
  config: { providers, defaultProvider: 'sg' },
});

let api: Api;
let signals: Signals;

beforeAll(async () => {
  const { sandbox, prefix } = fleet();
  const keys = sandbox.webhookKeys();
  api = createApi({
    config: parseConfig({
      redis: { url: inject('redisUrl'), prefix },
      providers,
      defaultProvider: 'sg',
      api: {
        port: 0,
        webhooks: {
          sendgrid: { publicKey: keys.sendgridPublicKey },
          mailgun: { signingKey: keys.mailgunSigningKey },
        },
      },
    }),
    logger: pino({ level: 'silent' }),
  });
  const address = await api.listen();
  // The api's port is known only now: point the receivers' reports at it.
  sandbox.setScenario({
    domains: { 'angry.test': { complaintRate: 1 }, 'gone.test': { bounceRate: 1 } },
    webhooks: { sendgrid: { url: `${address}/webhooks/sendgrid` }, reportDelayMs: 50 },
  });
  signals = createSignals({ redis: fleet().redis, keys: createKeys(prefix) });
});

afterAll(async () => {
  await signals?.close();
  await api?.close();
});

const finalState = (id: string) =>
  waitFor(
    async () => {
      const r = await fleet().client.messages.status(id);
      return r && ['sent', 'rejected', 'suppressed', 'expired', 'cancelled'].includes(r.state) ? r : null;
    },
    10_000,
    `final state of ${id}`,
  );

it('suppresses recipients who complain or bounce, and counts both as signals of the campaign', async () => {
  const { client, sandbox } = fleet();
  await client.campaigns.create({ id: 'spring', priority: 'normal' });
  const base = { from: 'news@acme.test', subject: 's', text: 't', campaignId: 'spring' };
  const first = await client.sendBulk([
    { ...base, to: 'eve@angry.test' },
    { ...base, to: 'old@gone.test' },
    { ...base, to: 'fan@fine.test' },
  ]);
  const records = await Promise.all(first.map((m) => finalState(m.id)));
  expect(records.map((r) => [r.state, r.provider])).toEqual([
    ['sent', 'sg'],
    ['sent', 'sg'],
    ['sent', 'sg'],
  ]);

  const complaint = await waitFor(() => client.suppressions.get('default', 'eve@angry.test'), 5_000, 'complaint');
  const bounce = await waitFor(() => client.suppressions.get('default', 'old@gone.test'), 5_000, 'bounce');
  expect(complaint).toMatchObject({ source: 'complaint', provider: 'sendgrid' });
  expect(bounce).toMatchObject({ source: 'bounce', provider: 'sendgrid' });
  expect(await client.suppressions.get('default', 'fan@fine.test')).toBeNull();
  // The sandbox counts a report once the api has answered it, just after the api applied it.
  await waitFor(() => sandbox.stats().webhooksSent === 2, 5_000, 'both reports answered');
  expect(sandbox.stats()).toMatchObject({ webhooksSent: 2, webhooksFailed: 0 });

  // The next message to either never reaches the provider.
  const second = await client.sendBulk([
    { ...base, to: 'eve@angry.test' },
    { ...base, to: 'old@gone.test' },
  ]);
  expect((await Promise.all(second.map((m) => finalState(m.id)))).map((r) => r.state)).toEqual([
    'suppressed',
    'suppressed',
  ]);
  expect(sandbox.accepted()).toHaveLength(3);

  // The api writes its signals once a second.
  const campaign = await waitFor(
    async () => {
      const w = await signals.read({ kind: 'campaign', name: 'spring' }, 60_000);
      return w.count('complained') && w.count('bounced_hard') ? w : null;
    },
    5_000,
    'signals',
  );
  expect(campaign.count('complained')).toBe(1);
  expect(campaign.count('bounced_hard')).toBe(1);
  const provider = await signals.read({ kind: 'provider', name: 'sg' }, 60_000);
  expect([provider.count('complained'), provider.count('bounced_hard')]).toEqual([1, 1]);
  const receiver = await signals.read({ kind: 'receiver', name: 'gone.test' }, 60_000);
  expect(receiver.count('bounced_hard')).toBe(1);
});
