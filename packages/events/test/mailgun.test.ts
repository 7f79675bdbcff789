import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { normalizeMailgunEvent, parseMailgunSignature, verifyMailgunSignature, type EventWindow } from '@sluice/events';

// The fixtures are old: the window is the API's to set, so these take any time since 2000.
const ANY_TIME: EventWindow = { maxAgeSeconds: Number.POSITIVE_INFINITY };
function normalized(body: unknown) {
  const result = normalizeMailgunEvent(body, ANY_TIME);
  if (!result.ok) throw new Error(result.message);
  return result.value;
}

const KEY = 'key-webhook-signing-test';
const hmac = (timestamp: string, token: string, key = KEY): string =>
  createHmac('sha256', key)
    .update(timestamp + token)
    .digest('hex');
const TS = '1534110422';
const TOKEN = '1234567890abcdef1234567890abcdef';
const now = Number(TS) * 1000;

describe('Mailgun webhook signature (Mailgun securing-webhooks docs)', () => {
  it('accepts hex(HMAC-SHA256(signingKey, timestamp + token))', () => {
    const sig = { timestamp: TS, token: TOKEN, signature: hmac(TS, TOKEN) };
    expect(verifyMailgunSignature(sig, KEY, { now })).toEqual({ ok: true, value: true });
  });

  it('refuses another key’s signature (the API key is not the signing key), a changed token, and a stale timestamp', () => {
    expect(
      verifyMailgunSignature({ timestamp: TS, token: TOKEN, signature: hmac(TS, TOKEN, 'api-key') }, KEY, { now }),
    ).toMatchObject({ code: 'bad_signature' });
    expect(
      verifyMailgunSignature({ timestamp: TS, token: `${TOKEN}x`, signature: hmac(TS, TOKEN) }, KEY, { now }),
    ).toMatchObject({ code: 'bad_signature' });
    expect(
      verifyMailgunSignature({ timestamp: TS, token: TOKEN, signature: hmac(TS, TOKEN) }, KEY, { now: now + 301_000 }),
    ).toMatchObject({ code: 'stale' });
  });

  it('says what is malformed', () => {
    expect(parseMailgunSignature({})).toMatchObject({ ok: false, code: 'malformed', message: 'signature is missing' });
    expect(parseMailgunSignature({ signature: { timestamp: TS, token: TOKEN, signature: 'zz' } })).toMatchObject({
      code: 'malformed',
    });
    expect(
      parseMailgunSignature({ signature: { timestamp: 1534110422, token: TOKEN, signature: hmac(TS, TOKEN) } }),
    ).toMatchObject({ code: 'malformed' });
  });
});

describe('Mailgun events (Mailgun webhook-payloads docs, anymail fixtures)', () => {
  // The permanent failure of the reference §4.3.
  const permanent = {
    signature: { timestamp: TS, token: TOKEN, signature: hmac(TS, TOKEN) },
    'event-data': {
      event: 'failed',
      id: 'G9Bn5sl1TC6nu79C8C0bwg',
      severity: 'permanent',
      reason: 'bounce',
      recipient: 'invalid@example.com',
      timestamp: 1534110422.389832,
      'log-level': 'error',
      'user-variables': { sluice_id: 'm00ff', sluice_tenant: 'acme', sluice_campaign: 'spring' },
      message: {
        headers: {
          to: 'invalid@example.com',
          'message-id': '20180812214658.1.0DF563D0B3597700@example.org',
          from: 'Test Sender <s@example.org>',
        },
      },
      'delivery-status': {
        tls: true,
        'mx-host': 'aspmx.l.example.org',
        'attempt-no': 1,
        description: '',
        code: 550,
        message:
          "5.1.1 The email account that you tried to reach does not exist. Please try\n5.1.1 double-checking the recipient's email address for typos",
      },
    },
  };

  it('failed + permanent is a hard bounce, matched to our ids', () => {
    expect(normalized(permanent)).toEqual({
      provider: 'mailgun',
      kind: 'bounced_hard',
      messageId: 'm00ff',
      tenantId: 'acme',
      campaignId: 'spring',
      providerMessageId: '20180812214658.1.0DF563D0B3597700@example.org',
      recipient: 'invalid@example.com',
      at: 1534110422390,
      reason: expect.stringMatching(/^550 5\.1\.1 The email account/) as unknown,
      enhanced: '5.1.1',
      eventId: 'G9Bn5sl1TC6nu79C8C0bwg@1534110422.389832',
    });
  });

  it('failed + temporary is a deferral while Mailgun retries, and a soft bounce once it gives up (reason old)', () => {
    const temp = (reason: string, status: object) => ({
      'event-data': {
        event: 'failed',
        id: 'x1',
        severity: 'temporary',
        reason,
        recipient: 'a@nomx.example.com',
        timestamp: 1534110422,
        'delivery-status': status,
      },
    });
    expect(
      normalized(
        temp('generic', { 'attempt-no': 3, 'retry-seconds': 1800, code: 498, message: 'No MX for nomx.example.com' }),
      ),
    ).toMatchObject({
      kind: 'deferred',
      reason: '498 No MX for nomx.example.com',
    });
    expect(
      normalized(
        temp('greylisted', { code: 450, 'retry-seconds': 300, message: 'Recipient address rejected: Greylisted' }),
      ),
    ).toMatchObject({ kind: 'deferred' });
    expect(normalized(temp('old', { code: 498, message: 'No MX for nomx.example.com' }))).toMatchObject({
      kind: 'bounced_soft',
    });
  });

  it('complained and unsubscribed suppress; opened and clicked are ignored', () => {
    const ev = (event: string) => ({
      'event-data': { event, id: 'e', recipient: 'r@example.com', timestamp: 1534110422 },
    });
    expect(normalized(ev('complained'))).toMatchObject({ kind: 'complained' });
    expect(normalized(ev('unsubscribed'))).toMatchObject({ kind: 'unsubscribed' });
    expect(normalized(ev('delivered'))).toMatchObject({ kind: 'delivered' });
    expect(normalized(ev('opened'))).toBeNull();
    expect(normalized(ev('clicked'))).toBeNull();
  });

  it('refuses an event it acts on without a usable time, id or recipient, naming the field: no key ending @undefined', () => {
    const now = 1534110422_000;
    const data = { event: 'complained', id: 'e', recipient: 'r@example.com', timestamp: 1534110422 };
    const read = (over: Record<string, unknown>, window: EventWindow = { now }) =>
      normalizeMailgunEvent({ 'event-data': { ...data, ...over } }, window);
    expect(read({ timestamp: undefined })).toMatchObject({
      ok: false,
      code: 'malformed',
      field: 'event-data.timestamp',
      message: 'event-data.timestamp: must be unix seconds (a number)',
    });
    expect(read({ timestamp: 1e20 })).toMatchObject({ field: 'event-data.timestamp' });
    expect(read({ timestamp: Number.NaN })).toMatchObject({ field: 'event-data.timestamp' });
    expect(read({}, { now: now + 3 * 86_400_000 })).toMatchObject({ field: 'event-data.timestamp' });
    expect(read({}, { now: now - 301_000 })).toMatchObject({ field: 'event-data.timestamp' });
    expect(read({ id: '' })).toMatchObject({ field: 'event-data.id' });
    expect(read({ recipient: 'nobody' })).toMatchObject({ field: 'event-data.recipient' });
    expect(normalizeMailgunEvent({ nothing: true })).toMatchObject({ ok: false, field: 'event-data' });
    expect(read({})).toMatchObject({ ok: true, value: { eventId: 'e@1534110422', at: 1534110422000 } });
  });
});
