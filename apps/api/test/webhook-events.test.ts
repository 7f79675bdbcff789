import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SENDGRID_MAX_EVENTS, SES_MAX_RECIPIENTS, type SnsEnvelope } from '@sluice/events';
import { useRedisPrefix } from '../../../test/support/redis-prefix.js';
import {
  CERT_URL,
  MAILGUN_KEY,
  TOPIC,
  createSendgridSigner,
  createSnsSigner,
  createWorld,
  mailgunSignature,
  type World,
} from './support.js';

// Signed events that were taken although they could not be used (issue 12, defect 6): a
// Mailgun event without a timestamp (its dedupe key ended `@undefined`), one dated 1e20,
// and requests of any size. Each is now a 4xx naming the field, and writes nothing.

const sendgrid = createSendgridSigner();
const sns = createSnsSigner();
const r = useRedisPrefix();
let world: World;

beforeEach(async () => {
  world = await createWorld(
    r,
    {
      api: {
        webhooks: {
          ses: { topicArns: [TOPIC] },
          sendgrid: { publicKey: sendgrid.publicKey },
          mailgun: { signingKey: MAILGUN_KEY },
        },
      },
    },
    { fetchCertificate: async () => sns.certificate, confirmSubscription: async () => undefined },
  );
});
afterEach(() => world.close());

const nowSeconds = () => Math.floor(Date.now() / 1000);

const mailgun = (data: Record<string, unknown>) =>
  world.api.server.inject({
    method: 'POST',
    url: '/webhooks/mailgun',
    headers: { 'content-type': 'application/json' },
    payload: JSON.stringify({ signature: mailgunSignature(), 'event-data': data }),
  });

const complaint = (over: Record<string, unknown> = {}) => ({
  event: 'complained',
  id: crypto.randomUUID(),
  recipient: 'angry@example.com',
  timestamp: Date.now() / 1000,
  'user-variables': { sluice_tenant: 'acme' },
  ...over,
});

const sendgridPost = (events: unknown[]) => {
  const body = JSON.stringify(events);
  return world.api.server.inject({
    method: 'POST',
    url: '/webhooks/sendgrid',
    headers: sendgrid.headers(body),
    payload: body,
  });
};

const sesPost = (message: unknown) => {
  const envelope: SnsEnvelope = sns.sign({
    Type: 'Notification',
    MessageId: crypto.randomUUID(),
    TopicArn: TOPIC,
    Message: JSON.stringify(message),
    Timestamp: new Date().toISOString(),
    SignatureVersion: '2',
    SigningCertURL: CERT_URL,
  });
  return world.api.server.inject({
    method: 'POST',
    url: '/webhooks/ses',
    headers: { 'content-type': 'text/plain; charset=UTF-8' },
    payload: JSON.stringify(envelope),
  });
};

const sesBounce = (recipients: object[], over: Record<string, unknown> = {}) => ({
  eventType: 'Bounce',
  bounce: {
    bounceType: 'Permanent',
    bouncedRecipients: recipients,
    timestamp: new Date().toISOString(),
    feedbackId: crypto.randomUUID(),
    ...over,
  },
  mail: { messageId: 'ses-1', tags: { sluice_tenant: ['acme'] } },
});

/** Sends `request` and expects a refusal that names `field` and leaves every key as it was. */
async function refusedUnchanged(
  request: () => Promise<{ statusCode: number; json(): unknown }>,
  status: number,
  error: Record<string, unknown>,
): Promise<void> {
  const before = await world.snapshot();
  const res = await request();
  expect(res.statusCode).toBe(status);
  expect(res.json()).toEqual({ error: { message: expect.any(String) as unknown, ...error } });
  expect(await world.snapshot()).toEqual(before);
}

describe('signed events Sluice cannot use are refused, naming the field, and write nothing', () => {
  it('Mailgun: no timestamp, a timestamp of 1e20 or from last week, no id, no recipient', async () => {
    const malformed = (field: string) => ({ code: 'malformed', field });
    await refusedUnchanged(() => mailgun(complaint({ timestamp: undefined })), 400, malformed('event-data.timestamp'));
    await refusedUnchanged(() => mailgun(complaint({ timestamp: 1e20 })), 400, malformed('event-data.timestamp'));
    const lastWeek = nowSeconds() - 7 * 86_400;
    await refusedUnchanged(() => mailgun(complaint({ timestamp: lastWeek })), 400, malformed('event-data.timestamp'));
    await refusedUnchanged(() => mailgun(complaint({ id: undefined })), 400, malformed('event-data.id'));
    await refusedUnchanged(() => mailgun(complaint({ recipient: 42 })), 400, malformed('event-data.recipient'));
    // The same event with its timestamp is taken, under a key with that timestamp.
    const ok = complaint();
    expect((await mailgun(ok)).json()).toEqual({ events: 1, duplicates: 0, suppressed: 1 });
    expect(
      await world.redis.exists(world.keys.feedbackEvent('acme', 'mailgun', `${ok.id as string}@${ok.timestamp}`)),
    ).toBe(1);
  });

  it('SendGrid: one unusable event refuses the whole batch, naming its index and field', async () => {
    const good = { email: 'a@example.com', event: 'bounce', sg_event_id: 'sg-ok', timestamp: nowSeconds() };
    await refusedUnchanged(() => sendgridPost([good, { ...good, sg_event_id: 'sg-2', timestamp: undefined }]), 400, {
      code: 'malformed',
      field: '1.timestamp',
    });
    await refusedUnchanged(() => sendgridPost([good, { ...good, timestamp: 1e20 }]), 400, {
      code: 'malformed',
      field: '1.timestamp',
    });
    await refusedUnchanged(() => sendgridPost([{ ...good, sg_event_id: '' }]), 400, {
      code: 'malformed',
      field: '0.sg_event_id',
    });
  });

  it('SES: a bounce without its time or with a recipient that is no address', async () => {
    const to = [{ emailAddress: 'gone@example.com' }];
    await refusedUnchanged(() => sesPost(sesBounce(to, { timestamp: undefined })), 400, {
      code: 'malformed',
      field: 'Message.bounce.timestamp',
    });
    await refusedUnchanged(() => sesPost(sesBounce([...to, { emailAddress: null }])), 400, {
      code: 'malformed',
      field: 'Message.bounce.bouncedRecipients.1.emailAddress',
    });
  });
});

describe('what one request may write is bounded', () => {
  it(`SendGrid: more than ${SENDGRID_MAX_EVENTS} events in a batch is refused whole with 413`, async () => {
    const events = Array.from({ length: SENDGRID_MAX_EVENTS + 1 }, (_, i) => ({
      email: `r${i}@example.com`,
      event: 'bounce',
      sg_event_id: `sg-${i}`,
      timestamp: nowSeconds(),
    }));
    await refusedUnchanged(() => sendgridPost(events), 413, { code: 'too_many_events' });
  });

  it(`SES: more than ${SES_MAX_RECIPIENTS} recipients in one event is refused with 413`, async () => {
    const many = Array.from({ length: SES_MAX_RECIPIENTS + 1 }, (_, i) => ({ emailAddress: `r${i}@example.com` }));
    await refusedUnchanged(() => sesPost(sesBounce(many)), 413, { code: 'too_many_events' });
  });

  it('Mailgun and SES: a body over 1 MiB is refused with 413 too_large before it is read', async () => {
    const big = complaint({ padding: 'x'.repeat(1024 * 1024) });
    await refusedUnchanged(() => mailgun(big), 413, { code: 'too_large' });
    await refusedUnchanged(
      () =>
        world.api.server.inject({
          method: 'POST',
          url: '/webhooks/ses',
          headers: { 'content-type': 'text/plain' },
          payload: 'x'.repeat(1024 * 1024 + 1),
        }),
      413,
      { code: 'too_large' },
    );
  });
});

describe('events for message ids Sluice has no record of', () => {
  it('suppress the address on every ESP alike (the ESP’s word about the address), and count no signal', async () => {
    const unknown = 'm0000000000000000000000000';
    expect(await world.store.get(unknown)).toBeNull();
    const mg = await mailgun(
      complaint({ recipient: 'mg@example.com', 'user-variables': { sluice_id: unknown, sluice_tenant: 'acme' } }),
    );
    const sg = await sendgridPost([
      {
        email: 'sg@example.com',
        event: 'spamreport',
        sg_event_id: 'sg-unknown',
        timestamp: nowSeconds(),
        sluice_id: unknown,
        sluice_tenant: 'acme',
      },
    ]);
    const bounce = sesBounce([{ emailAddress: 'ses@example.com' }]);
    bounce.mail.tags = { sluice_tenant: ['acme'], sluice_id: [unknown] } as typeof bounce.mail.tags;
    const ses = await sesPost(bounce);
    for (const res of [mg, sg, ses]) expect(res.json()).toEqual({ events: 1, duplicates: 0, suppressed: 1 });
    for (const address of ['mg@example.com', 'sg@example.com', 'ses@example.com']) {
      expect(await world.suppressions.get('acme', address)).toMatchObject({ source: expect.any(String) as unknown });
    }
    // No record: no provider or campaign to count the bounce under, so no signal and no record made up.
    await world.signals.flush();
    expect(await world.redis.keys(`${r.prefix}:*sig*`)).toEqual([]);
    expect(await world.store.get(unknown)).toBeNull();
  });
});
