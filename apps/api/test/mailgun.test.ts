import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { useRedisPrefix } from '../../../test/support/redis-prefix.js';
import { MAILGUN_KEY, createWorld, mailgunSignature, type World } from './support.js';

const r = useRedisPrefix();
let world: World;

beforeEach(async () => {
  world = await createWorld(r, {
    api: { webhooks: { mailgun: { signingKey: MAILGUN_KEY } } },
    suppression: { softBounces: { count: 2 } },
  });
});
afterEach(() => world.close());

// The permanent failure of the Mailgun webhook-payloads docs (reference §4.3), our ids in user-variables.
const failed = (to: string, vars: Record<string, string>, over: Record<string, unknown> = {}) => ({
  event: 'failed',
  id: crypto.randomUUID(),
  severity: 'permanent',
  reason: 'bounce',
  recipient: to,
  timestamp: Date.now() / 1000,
  'log-level': 'error',
  'user-variables': vars,
  message: {
    headers: { to, 'message-id': '20180812214658.1.0DF563D0B3597700@example.org', from: 'Test Sender <s@example.org>' },
  },
  'delivery-status': {
    code: 550,
    message: '5.1.1 The email account that you tried to reach does not exist.',
    'attempt-no': 1,
    description: '',
  },
  ...over,
});

const post = (body: unknown) =>
  world.api.server.inject({
    method: 'POST',
    url: '/webhooks/mailgun',
    headers: { 'content-type': 'application/json' },
    payload: typeof body === 'string' ? body : JSON.stringify(body),
  });

describe('POST /webhooks/mailgun', () => {
  it('a signed permanent failure suppresses the recipient, matched to our message; the same request again is refused as a replay', async () => {
    const m = await world.accepted('gone@example.com');
    const body = {
      signature: mailgunSignature(),
      'event-data': failed('gone@example.com', { sluice_id: m.id, sluice_tenant: 'acme' }),
    };
    const res = await post(body);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ events: 1, duplicates: 0, suppressed: 1 });
    expect(await world.suppressions.get('acme', 'gone@example.com')).toMatchObject({
      source: 'bounce',
      provider: 'mailgun',
      reason: expect.stringMatching(/^550 5\.1\.1/) as unknown,
    });
    expect(await world.store.get(m.id)).toMatchObject({ lastEvent: 'bounced_hard' });

    await world.suppressions.remove('acme', 'gone@example.com');
    const before = await world.snapshot();
    const replay = await post(body);
    // 406: Mailgun does not retry it.
    expect(replay.statusCode).toBe(406);
    expect(replay.json()).toMatchObject({ error: { code: 'replayed' } });
    expect(await world.snapshot()).toEqual(before);
    expect(await world.store.suppressed('acme', 'gone@example.com')).toBeNull();
  });

  it("Mailgun's retry of a request whose api died before applying it (its token left applying) is applied, not refused", async () => {
    const m = await world.accepted('died@example.com');
    const signature = mailgunSignature();
    const body = {
      signature,
      'event-data': failed('died@example.com', { sluice_id: m.id, sluice_tenant: 'acme' }),
    };
    // What an api killed after claiming the token and before applying the event left behind.
    await world.redis.set(world.keys.webhookToken('mailgun', signature.token), 'applying', 'EX', 600);
    const retry = await post(body);
    expect(retry.statusCode).toBe(200);
    expect(retry.json()).toEqual({ events: 1, duplicates: 0, suppressed: 1 });
    expect(await world.store.suppressed('acme', 'died@example.com')).not.toBeNull();
    // Applied now: the same request again is a replay.
    expect((await post(body)).statusCode).toBe(406);
  });

  it('temporary failures are deferrals until Mailgun gives up (reason old), which count as soft bounces', async () => {
    const temp = (reason: string) => ({
      signature: mailgunSignature(),
      'event-data': failed(
        'slow@example.com',
        {},
        {
          severity: 'temporary',
          reason,
          'delivery-status': { code: 498, message: 'No MX for example.com', 'retry-seconds': 1800 },
        },
      ),
    });
    expect((await post(temp('generic'))).json()).toMatchObject({ events: 1, suppressed: 0 });
    expect((await post(temp('old'))).json()).toMatchObject({ suppressed: 0 });
    expect(await world.store.suppressed('default', 'slow@example.com')).toBeNull();
    expect((await post(temp('old'))).json()).toMatchObject({ suppressed: 1 });
    expect(await world.suppressions.get('default', 'slow@example.com')).toMatchObject({ source: 'soft-bounces' });
  });

  describe('forged, stale or malformed: a clear 4xx, and nothing written', () => {
    const event = () => failed('victim@example.com', {});
    const cases: [string, () => unknown, number, string][] = [
      [
        'signed with another key (the API key)',
        () => ({ signature: mailgunSignature('key-api'), 'event-data': event() }),
        401,
        'bad_signature',
      ],
      [
        'a genuine signature ten minutes old',
        () => ({
          signature: mailgunSignature(MAILGUN_KEY, Math.floor(Date.now() / 1000) - 600),
          'event-data': event(),
        }),
        401,
        'stale',
      ],
      ['no signature', () => ({ 'event-data': event() }), 400, 'malformed'],
      ['a body that is not JSON', () => '{"signature":', 400, 'malformed'],
    ];
    for (const [what, body, status, code] of cases) {
      it(what, async () => {
        const before = await world.snapshot();
        const res = await post(body());
        expect(res.statusCode).toBe(status);
        expect(res.json()).toEqual({ error: { code, message: expect.any(String) as unknown } });
        expect(await world.snapshot()).toEqual(before);
      });
    }
  });

  it('answers 503 and takes nothing when no signing key is configured', async () => {
    const bare = await createWorld(r, {});
    try {
      const res = await bare.api.server.inject({
        method: 'POST',
        url: '/webhooks/mailgun',
        headers: { 'content-type': 'application/json' },
        payload: JSON.stringify({ signature: mailgunSignature(), 'event-data': failed('victim@example.com', {}) }),
      });
      expect(res.statusCode).toBe(503);
      expect(res.json()).toMatchObject({ error: { code: 'not_configured' } });
      expect(await bare.snapshot()).toEqual({});
    } finally {
      await bare.close();
    }
  });
});
