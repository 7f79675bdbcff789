import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { useRedisPrefix } from '../../../test/support/redis-prefix.js';
import type { SnsEnvelope } from '@sluice/events';
import { CERT_URL, TOPIC, createSnsSigner, createWorld, type World } from './support.js';

const signer = createSnsSigner();
const fetched: string[] = [];
const confirmed: string[] = [];
const r = useRedisPrefix();
let world: World;

beforeEach(async () => {
  world = await createWorld(
    r,
    {
      api: { webhooks: { ses: { topicArns: [TOPIC] } } },
      suppression: { softBounces: { count: 2, windowMs: 86_400_000 } },
    },
    {
      fetchCertificate: async (url) => {
        fetched.push(url);
        return signer.certificate;
      },
      confirmSubscription: async (url) => {
        confirmed.push(url);
      },
    },
  );
});
afterEach(() => world.close());

// The AWS bounce example (notification-contents), with our tags as event publishing returns them.
function bounce(to: string, id: string | undefined, type: 'Permanent' | 'Transient', feedbackId: string): string {
  return JSON.stringify({
    eventType: 'Bounce',
    bounce: {
      bounceType: type,
      bounceSubType: type === 'Permanent' ? 'General' : 'MailboxFull',
      bouncedRecipients: [
        {
          emailAddress: to,
          action: 'failed',
          status: '5.1.1',
          diagnosticCode: `smtp; 550 5.1.1 <${to}>... User unknown`,
        },
      ],
      timestamp: new Date().toISOString(),
      feedbackId,
    },
    mail: {
      timestamp: new Date().toISOString(),
      messageId: '0000014a-ses',
      source: 'john@example.com',
      destination: [to],
      tags: id ? { sluice_id: [id], sluice_tenant: ['acme'] } : {},
    },
  });
}

const notification = (message: string, over: Partial<SnsEnvelope> = {}): SnsEnvelope =>
  signer.sign({
    Type: 'Notification',
    MessageId: crypto.randomUUID(),
    TopicArn: TOPIC,
    Subject: 'Amazon SES Email Event Notification',
    Message: message,
    Timestamp: new Date().toISOString(),
    SignatureVersion: '2',
    SigningCertURL: CERT_URL,
    ...over,
  });

const confirmation = (over: Partial<SnsEnvelope> = {}): SnsEnvelope =>
  signer.sign({
    Type: 'SubscriptionConfirmation',
    MessageId: crypto.randomUUID(),
    TopicArn: TOPIC,
    Message: 'You have chosen to subscribe to the topic.',
    Token: '2336412f37fb687f5d51e6e241d09c805a5a57b30d712f794cc5f6a988666d92768dd60a747ba6f3',
    SubscribeURL: `https://sns.us-east-1.amazonaws.com/?Action=ConfirmSubscription&TopicArn=${TOPIC}&Token=2336412f`,
    Timestamp: new Date().toISOString(),
    SignatureVersion: '1',
    SigningCertURL: CERT_URL,
    ...over,
  });

const post = (body: unknown, headers: Record<string, string> = {}) =>
  world.api.server.inject({
    method: 'POST',
    url: '/webhooks/ses',
    headers: { 'content-type': 'text/plain; charset=UTF-8', ...headers },
    payload: typeof body === 'string' ? body : JSON.stringify(body),
  });

describe('POST /webhooks/ses (SNS)', () => {
  it('a signed Permanent bounce suppresses the recipient, matched to our message; SNS’s retry of it changes nothing', async () => {
    const m = await world.accepted('Jane@Example.com');
    const n = notification(bounce('jane@example.com', m.id, 'Permanent', `fb-${m.id}`));
    const res = await post(n, { 'x-amz-sns-message-type': 'Notification' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ events: 1, duplicates: 0, suppressed: 1 });
    expect(await world.suppressions.get('acme', 'jane@example.com')).toMatchObject({
      source: 'bounce',
      provider: 'ses',
      reason: expect.stringContaining('550 5.1.1') as unknown,
    });
    expect(await world.store.get(m.id)).toMatchObject({ lastEvent: 'bounced_hard' });

    const before = await world.snapshot();
    const again = await post(n);
    expect(again.statusCode).toBe(200);
    expect(again.json()).toMatchObject({ duplicates: 1, suppressed: 0 });
    expect(await world.snapshot()).toEqual(before);
  });

  it('soft bounces suppress only at the configured count', async () => {
    const first = await post(notification(bounce('full@example.com', undefined, 'Transient', 'fb-soft-1')));
    expect(first.json()).toMatchObject({ suppressed: 0 });
    expect(await world.store.suppressed('default', 'full@example.com')).toBeNull();
    const second = await post(notification(bounce('full@example.com', undefined, 'Transient', 'fb-soft-2')));
    expect(second.json()).toMatchObject({ suppressed: 1 });
    expect(await world.suppressions.get('default', 'full@example.com')).toMatchObject({ source: 'soft-bounces' });
  });

  describe('forged or malformed: a clear 4xx, and nothing written', () => {
    const cases: [string, () => string, number, string][] = [
      [
        'a message changed after signing',
        () =>
          JSON.stringify({
            ...notification(bounce('x@example.com', undefined, 'Permanent', 'fb-f1')),
            Message: bounce('victim@example.com', undefined, 'Permanent', 'fb-f1'),
          }),
        401,
        'bad_signature',
      ],
      [
        'a certificate off the SNS hosts',
        () =>
          JSON.stringify(
            notification(bounce('x@example.com', undefined, 'Permanent', 'fb-f2'), {
              SigningCertURL: 'https://attacker.example/cert.pem',
            }),
          ),
        403,
        'forbidden_cert_url',
      ],
      [
        'a topic not ours',
        () =>
          JSON.stringify(
            notification(bounce('x@example.com', undefined, 'Permanent', 'fb-f3'), {
              TopicArn: 'arn:aws:sns:us-east-1:999999999999:other',
            }),
          ),
        403,
        'forbidden_topic',
      ],
      [
        'a replay older than the dedupe memory',
        () =>
          JSON.stringify(
            notification(bounce('x@example.com', undefined, 'Permanent', 'fb-f4'), {
              Timestamp: '2020-01-01T00:00:00.000Z',
            }),
          ),
        401,
        'stale',
      ],
      ['a body that is not JSON', () => 'Type=Notification&Message=hi', 400, 'malformed'],
      [
        'an envelope missing its signature',
        () => JSON.stringify({ ...notification('{}'), Signature: undefined }),
        400,
        'malformed',
      ],
    ];
    for (const [what, body, status, code] of cases) {
      it(what, async () => {
        const before = await world.snapshot();
        fetched.length = 0;
        const res = await post(body());
        expect(res.statusCode).toBe(status);
        expect(res.json()).toEqual({ error: { code, message: expect.any(String) as unknown } });
        expect(await world.snapshot()).toEqual(before);
        expect(await world.store.suppressed('default', 'x@example.com')).toBeNull();
        if (code === 'forbidden_cert_url') expect(fetched).toEqual([]);
      });
    }
  });

  describe('SubscriptionConfirmation is confirmed only after every check', () => {
    it('confirmed: signature, certificate host, topic and SubscribeURL host all pass', async () => {
      confirmed.length = 0;
      const c = confirmation();
      const res = await post(c, { 'x-amz-sns-message-type': 'SubscriptionConfirmation' });
      expect(res.statusCode).toBe(200);
      expect(confirmed).toEqual([c.SubscribeURL]);
    });

    const refused: [string, () => SnsEnvelope, string][] = [
      ['a bad signature', () => ({ ...confirmation(), Token: 'changed-after-signing' }), 'bad_signature'],
      [
        'a certificate off the SNS hosts',
        () => confirmation({ SigningCertURL: 'https://sns.us-east-1.amazonaws.com.attacker.example/c.pem' }),
        'forbidden_cert_url',
      ],
      [
        'a topic not ours',
        () => confirmation({ TopicArn: 'arn:aws:sns:us-east-1:999999999999:other' }),
        'forbidden_topic',
      ],
      [
        'a SubscribeURL elsewhere (SSRF)',
        () => confirmation({ SubscribeURL: 'https://169.254.169.254/latest/meta-data/iam' }),
        'forbidden_subscribe_url',
      ],
    ];
    for (const [what, envelope, code] of refused) {
      it(`not confirmed: ${what}`, async () => {
        confirmed.length = 0;
        const res = await post(envelope());
        expect(res.statusCode).toBeGreaterThanOrEqual(400);
        expect(res.statusCode).toBeLessThan(500);
        expect(res.json()).toMatchObject({ error: { code } });
        expect(confirmed).toEqual([]);
      });
    }
  });
});

describe('POST /webhooks/ses with no topic configured', () => {
  it('refuses everything with 503, never taking an unverified event', async () => {
    const bare = await createWorld(
      r,
      {},
      { fetchCertificate: async () => signer.certificate, confirmSubscription: async (u) => void confirmed.push(u) },
    );
    try {
      confirmed.length = 0;
      const res = await bare.api.server.inject({
        method: 'POST',
        url: '/webhooks/ses',
        payload: JSON.stringify(confirmation()),
        headers: { 'content-type': 'text/plain' },
      });
      expect(res.statusCode).toBe(503);
      expect(res.json()).toMatchObject({ error: { code: 'not_configured' } });
      expect(confirmed).toEqual([]);
    } finally {
      await bare.close();
    }
  });
});
