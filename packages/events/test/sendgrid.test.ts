import { generateKeyPairSync, sign } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  SENDGRID_MAX_EVENTS,
  normalizeSendgridEvents,
  verifySendgridSignature,
  type EventWindow,
} from '@sluice/events';

// The fixtures are old: the window is the API's to set, so these take any time since 2000.
const ANY_TIME: EventWindow = { maxAgeSeconds: Number.POSITIVE_INFINITY };
function normalized(body: unknown) {
  const result = normalizeSendgridEvents(body, ANY_TIME);
  if (!result.ok) throw new Error(result.message);
  return result.value;
}

// The test vector of @sendgrid/eventwebhook src/eventwebhook.spec.js (reference §4.2).
const VECTOR = {
  key: 'MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE83T4O/n84iotIvIW4mdBgQ/7dAfSmpqIM8kF9mN1flpVKS3GRqe62gw+2fNNRaINXvVpiglSI8eNEc6wEA3F+g==',
  timestamp: '1600112502',
  signature: 'MEUCIGHQVtGj+Y3LkG9fLcxf3qfI10QysgDWmMOVmxG0u6ZUAiEAyBiXDWzM+uOe5W0JuG+luQAbPIqHh89M15TluLtEZtM=',
  payload:
    '[{"email":"hello@world.com","event":"dropped","reason":"Bounced Address","sg_event_id":"ZHJvcC0xMDk5NDkxOS1MUnpYbF9OSFN0T0doUTRrb2ZTbV9BLTA","sg_message_id":"LRzXl_NHStOGhQ4kofSm_A.filterdrecv-p3mdw1-756b745b58-kmzbl-18-5F5FC76C-9.0","smtp-id":"<LRzXl_NHStOGhQ4kofSm_A@ismtpd0039p1iad1.sendgrid.net>","timestamp":1600112492}]\r\n',
};
const at = (s: string): number => Number(s) * 1000;

describe('SendGrid signed Event Webhook', () => {
  it('verifies SendGrid’s own test vector (@sendgrid/eventwebhook spec) with node:crypto', () => {
    expect(
      verifySendgridSignature(VECTOR.payload, VECTOR.signature, VECTOR.timestamp, VECTOR.key, {
        now: at(VECTOR.timestamp),
      }),
    ).toEqual({ ok: true, value: true });
  });

  it('refuses the vector re-serialised (no trailing CRLF), with another timestamp, or signed by another key', () => {
    const now = at(VECTOR.timestamp);
    expect(
      verifySendgridSignature(VECTOR.payload.trimEnd(), VECTOR.signature, VECTOR.timestamp, VECTOR.key, { now }),
    ).toMatchObject({ code: 'bad_signature' });
    expect(verifySendgridSignature(VECTOR.payload, VECTOR.signature, '1600112503', VECTOR.key, { now })).toMatchObject({
      code: 'bad_signature',
    });
    const other = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
    const forged = sign('sha256', Buffer.from(VECTOR.timestamp + VECTOR.payload), other.privateKey).toString('base64');
    expect(verifySendgridSignature(VECTOR.payload, forged, VECTOR.timestamp, VECTOR.key, { now })).toMatchObject({
      code: 'bad_signature',
    });
  });

  it('refuses a genuine signature older than the window (a replay)', () => {
    const now = at(VECTOR.timestamp) + 301_000;
    expect(
      verifySendgridSignature(VECTOR.payload, VECTOR.signature, VECTOR.timestamp, VECTOR.key, { now }),
    ).toMatchObject({ ok: false, code: 'stale' });
    expect(
      verifySendgridSignature(VECTOR.payload, VECTOR.signature, VECTOR.timestamp, VECTOR.key, {
        now,
        maxAgeSeconds: 600,
      }),
    ).toMatchObject({ ok: true });
  });

  it('says what is missing rather than throwing', () => {
    expect(verifySendgridSignature(VECTOR.payload, undefined, VECTOR.timestamp, VECTOR.key)).toMatchObject({
      code: 'malformed',
    });
    expect(verifySendgridSignature(VECTOR.payload, VECTOR.signature, 'yesterday', VECTOR.key)).toMatchObject({
      code: 'malformed',
    });
    expect(
      verifySendgridSignature(VECTOR.payload, 'bm90IGEgc2lnbmF0dXJl', VECTOR.timestamp, VECTOR.key, {
        now: at(VECTOR.timestamp),
      }),
    ).toMatchObject({
      code: 'bad_signature',
    });
  });
});

describe('SendGrid events (Twilio event docs, @sendgrid/eventwebhook spec, anymail fixtures)', () => {
  it('bounce type "blocked" (eventwebhook spec) is a block, not a hard bounce', () => {
    const [e] = normalized([
      {
        email: 'invalid@gmail.com',
        event: 'bounce',
        ip: '167.89.101.76',
        reason: '552 5.2.2 The email account that you tried to reach is over quota and inactive.',
        sg_event_id: 'Ym91bmNlLTAtMTk5NDIxMTItcU53QkxnUFFRalc2REp2S1F3U0Fidy0w',
        sg_message_id: 'qNwBLgPQQjW6DJvKQwSAbw.filterdrecv-canary-547b64655b-cw6zx-1-6089EA4A-56.0',
        status: '5.2.2',
        timestamp: 1619651147,
        tls: 1,
        type: 'blocked',
        sluice_id: 'm0123abcd',
        sluice_tenant: 'acme',
      },
    ]);
    expect(e).toEqual({
      provider: 'sendgrid',
      kind: 'blocked',
      messageId: 'm0123abcd',
      tenantId: 'acme',
      campaignId: undefined,
      providerMessageId: 'qNwBLgPQQjW6DJvKQwSAbw.filterdrecv-canary-547b64655b-cw6zx-1-6089EA4A-56.0',
      recipient: 'invalid@gmail.com',
      at: 1619651147000,
      reason: expect.stringMatching(/^552 5\.2\.2/) as unknown,
      enhanced: '5.2.2',
      eventId: 'Ym91bmNlLTAtMTk5NDIxMTItcU53QkxnUFFRalc2REp2S1F3U0Fidy0w',
    });
  });

  it('maps bounce (type bounce or none), deferred (anymail), spamreport, unsubscribe, dropped; skips the rest', () => {
    const base = { email: 'Recipient@Example.com', timestamp: 1461200990 };
    const events = normalized([
      { ...base, event: 'bounce', type: 'bounce', reason: '550 5.1.1 user unknown', sg_event_id: 'e1' },
      { ...base, event: 'bounce', reason: 'unable to get mx info', sg_event_id: 'e2' },
      {
        ...base,
        event: 'deferred',
        attempt: '1',
        response: 'Email was deferred due to the following reason(s): [IPs were throttled by recipient server]',
        sg_event_id: 'b_syL5UiTvWC_Ky5L6Bs5Q',
        sg_message_id: 'u9Gvi3mzT6iC2poAb58_qQ.filter0465p1mdw1.8054.5718271B40.0',
      },
      { ...base, event: 'spamreport', sg_event_id: 'e4' },
      { ...base, event: 'unsubscribe', sg_event_id: 'e5' },
      { ...base, event: 'dropped', reason: 'Bounced Address', sg_event_id: 'e6' },
      { ...base, event: 'delivered', response: '250 OK', sg_event_id: 'e7' },
      { ...base, event: 'open', sg_event_id: 'e8' },
      { ...base, event: 'group_unsubscribe', asm_group_id: 1, sg_event_id: 'e9' },
      { event: 'open', note: 'a type we skip is not checked' },
    ]);
    expect(events.map((e) => [e.eventId, e.kind, e.recipient])).toEqual([
      ['e1', 'bounced_hard', 'recipient@example.com'],
      ['e2', 'bounced_hard', 'recipient@example.com'],
      ['b_syL5UiTvWC_Ky5L6Bs5Q', 'deferred', 'recipient@example.com'],
      ['e4', 'complained', 'recipient@example.com'],
      ['e5', 'unsubscribed', 'recipient@example.com'],
      ['e6', 'dropped', 'recipient@example.com'],
      ['e7', 'delivered', 'recipient@example.com'],
    ]);
    expect(events[0]).toMatchObject({ enhanced: '5.1.1', messageId: undefined });
    expect(events[2]!.reason).toMatch(/throttled by recipient server/);
  });

  it('ignores an id that is not one of ours (it would become a Redis key)', () => {
    const [e] = normalized([
      {
        email: 'a@b.test',
        event: 'delivered',
        sg_event_id: 'x',
        timestamp: 1461200990,
        sluice_id: 'a:b*',
        sluice_tenant: ['t1'],
      },
    ]);
    expect(e).toMatchObject({ messageId: undefined, tenantId: 't1' });
  });

  it('refuses a batch with an event Sluice acts on but cannot use, naming its field: no made-up time or id', () => {
    const base = { email: 'r@example.com', event: 'bounce', sg_event_id: 'e1', timestamp: 1461200990 };
    const now = 1461200990_000;
    const refused = (events: unknown[], window: EventWindow = { now }) => normalizeSendgridEvents(events, window);
    expect(refused([base, { ...base, timestamp: undefined }])).toMatchObject({
      ok: false,
      code: 'malformed',
      field: '1.timestamp',
    });
    expect(refused([{ ...base, timestamp: 1e20 }])).toMatchObject({ field: '0.timestamp' });
    expect(refused([{ ...base, timestamp: '1461200990' }])).toMatchObject({ field: '0.timestamp' });
    // Older than the dedupe memory (2 days by default), or from the future.
    expect(refused([base], { now: now + 3 * 86_400_000 })).toMatchObject({
      field: '0.timestamp',
      message: expect.stringMatching(/^0\.timestamp: must be within the last 172800 s/) as unknown,
    });
    expect(refused([base], { now: now - 600_000 })).toMatchObject({ field: '0.timestamp' });
    expect(refused([{ ...base, sg_event_id: undefined }])).toMatchObject({ field: '0.sg_event_id' });
    expect(refused([{ ...base, email: 'not an address' }])).toMatchObject({ field: '0.email' });
    expect(refused(['not an event'])).toMatchObject({ field: '0' });
    expect(normalizeSendgridEvents({ not: 'an array' })).toMatchObject({ ok: false, code: 'malformed' });
    expect(refused(Array.from({ length: SENDGRID_MAX_EVENTS + 1 }, () => ({ event: 'open' })))).toMatchObject({
      ok: false,
      code: 'too_many_events',
    });
  });
});
