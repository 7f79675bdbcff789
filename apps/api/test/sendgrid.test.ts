import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { normalizeSendgridEvents } from '@sluice/events';
import { createFeedback } from '@sluice/store';
import { useRedisPrefix } from '../../../test/support/redis-prefix.js';
import { createSendgridSigner, createWorld, type World } from './support.js';

const signer = createSendgridSigner();
const other = createSendgridSigner();
const r = useRedisPrefix();
let world: World;

beforeEach(async () => {
  world = await createWorld(r, { api: { webhooks: { sendgrid: { publicKey: signer.publicKey } } } });
});
afterEach(() => world.close());

// A batch as SendGrid posts it: a JSON array, `\r\n` between events and at the end
// (reference §4.2), our custom_args flattened into each event.
const batch = (events: object[]): string => `[${events.map((e) => JSON.stringify(e)).join(',\r\n')}]\r\n`;
const now = () => Math.floor(Date.now() / 1000);
const post = (body: string, headers: Record<string, string>) =>
  world.api.server.inject({ method: 'POST', url: '/webhooks/sendgrid', headers, payload: body });

describe('POST /webhooks/sendgrid (signed Event Webhook)', () => {
  it('a signed batch suppresses a hard bounce and a spam report, not a block, matched to our message', async () => {
    const m = await world.accepted('hard@example.com', 'acme', { campaignId: 'spring', provider: 'sg-main' });
    const body = batch([
      {
        email: 'hard@example.com',
        event: 'bounce',
        type: 'bounce',
        status: '5.1.1',
        reason: '550 5.1.1 user unknown',
        sg_event_id: 'sg-1',
        sg_message_id: 'x.1',
        timestamp: now(),
        sluice_id: m.id,
        sluice_tenant: 'acme',
      },
      {
        email: 'blocked@example.com',
        event: 'bounce',
        type: 'blocked',
        reason: 'unable to get mx info',
        sg_event_id: 'sg-2',
        timestamp: now(),
        sluice_tenant: 'acme',
      },
      { email: 'angry@example.com', event: 'spamreport', sg_event_id: 'sg-3', timestamp: now(), sluice_tenant: 'acme' },
      { email: 'open@example.com', event: 'open', sg_event_id: 'sg-4', timestamp: now(), sluice_tenant: 'acme' },
    ]);
    const res = await post(body, signer.headers(body));
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ events: 3, duplicates: 0, suppressed: 2 });
    expect(await world.suppressions.get('acme', 'hard@example.com')).toMatchObject({
      source: 'bounce',
      provider: 'sendgrid',
      reason: '550 5.1.1 user unknown',
    });
    expect(await world.suppressions.get('acme', 'angry@example.com')).toMatchObject({ source: 'complaint' });
    expect(await world.store.suppressed('acme', 'blocked@example.com')).toBeNull();
    expect(await world.store.get(m.id)).toMatchObject({ lastEvent: 'bounced_hard' });

    // The bounce of our message is a signal for every key it was sent under; the spam report
    // names no message of ours, so it counts nowhere (its provider is unknown).
    await world.signals.flush();
    const counts = async (kind: 'provider' | 'receiver' | 'campaign' | 'tenant' | 'pool', name: string) =>
      (await world.signals.read({ kind, name }, 60_000)).counts;
    expect(await counts('provider', 'sg-main')).toEqual({ bounced_hard: 1 });
    expect(await counts('pool', 'default')).toEqual({ bounced_hard: 1 });
    expect(await counts('receiver', 'example.com')).toEqual({ bounced_hard: 1 });
    expect(await counts('campaign', 'spring')).toEqual({ bounced_hard: 1 });
    expect(await counts('tenant', 'acme')).toEqual({ bounced_hard: 1 });

    // The same signed request again inside the window (SendGrid's retry): taken, no effect.
    const before = await world.snapshot();
    const again = await post(body, signer.headers(body));
    expect(again.json()).toMatchObject({ duplicates: 2, suppressed: 0 });
    await world.signals.flush();
    expect(await world.snapshot()).toEqual(before);
  });

  it('counts a bounce once: unflushed, and on the retry of a delivery killed before it was counted', async () => {
    const m = await world.accepted('gone@example.com', 'acme', { provider: 'sg-main' });
    const event = {
      email: 'gone@example.com',
      event: 'bounce',
      type: 'bounce',
      sg_event_id: 'sg-k',
      timestamp: now(),
      sluice_id: m.id,
    };
    // What an api killed after applying the event and before counting it left behind.
    const normalised = normalizeSendgridEvents([event]);
    if (!normalised.ok) throw new Error(normalised.message);
    await createFeedback({ redis: world.redis, keys: world.keys }).apply(normalised.value[0]!);
    const body = batch([event]);
    expect((await post(body, signer.headers(body))).json()).toMatchObject({ duplicates: 1 });
    const bounced = async () => (await world.signals.read({ kind: 'provider', name: 'sg-main' }, 60_000)).counts;
    // In Redis before the answer (nothing flushed): a kill after it loses nothing.
    expect(await bounced()).toEqual({ bounced_hard: 1 });
    expect((await post(body, signer.headers(body))).json()).toMatchObject({ duplicates: 1 });
    await world.signals.flush();
    expect(await bounced()).toEqual({ bounced_hard: 1 });
  });

  describe('forged, stale or malformed: a clear 4xx, and nothing written', () => {
    const event = batch([
      { email: 'victim@example.com', event: 'bounce', type: 'bounce', sg_event_id: 'sg-forged', timestamp: now() },
    ]);
    const cases: [string, () => [string, Record<string, string>], number, string][] = [
      ['signed by another key', () => [event, other.headers(event)], 401, 'bad_signature'],
      [
        'a body re-serialised after signing',
        () => [JSON.stringify(JSON.parse(event)), signer.headers(event)],
        401,
        'bad_signature',
      ],
      [
        'a genuine signature ten minutes old (a replay)',
        () => [event, signer.headers(event, now() - 600)],
        401,
        'stale',
      ],
      ['no signature headers', () => [event, { 'content-type': 'application/json' }], 400, 'malformed'],
      ['a signed body that is not JSON', () => ['not json', signer.headers('not json')], 400, 'malformed'],
      [
        'a signed object instead of an array',
        () => ['{"email":"victim@example.com"}', signer.headers('{"email":"victim@example.com"}')],
        400,
        'malformed',
      ],
    ];
    for (const [what, request, status, code] of cases) {
      it(what, async () => {
        const before = await world.snapshot();
        const [body, headers] = request();
        const res = await post(body, headers);
        expect(res.statusCode).toBe(status);
        expect(res.json()).toEqual({ error: { code, message: expect.any(String) as unknown } });
        expect(await world.snapshot()).toEqual(before);
        expect(await world.store.suppressed('default', 'victim@example.com')).toBeNull();
      });
    }
  });

  it('answers 503 and takes nothing when no key is configured', async () => {
    const bare = await createWorld(r, {});
    try {
      const body = batch([{ email: 'victim@example.com', event: 'spamreport', sg_event_id: 'sg-x', timestamp: now() }]);
      const res = await bare.api.server.inject({
        method: 'POST',
        url: '/webhooks/sendgrid',
        headers: signer.headers(body),
        payload: body,
      });
      expect(res.statusCode).toBe(503);
      expect(res.json()).toMatchObject({
        error: { code: 'not_configured', message: expect.stringContaining('SENDGRID_WEBHOOK_PUBLIC_KEY') as unknown },
      });
      expect(await bare.snapshot()).toEqual({});
    } finally {
      await bare.close();
    }
  });
});
