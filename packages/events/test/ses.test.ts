import { describe, expect, it } from 'vitest';
import { SES_MAX_RECIPIENTS, normalizeSesEvent, type EventWindow } from '@sluice/events';

// The fixtures are old: the window is the API's to set, so these take any time since 2000.
const ANY_TIME: EventWindow = { maxAgeSeconds: Number.POSITIVE_INFINITY };
function normalized(message: unknown, snsMessageId: string) {
  const result = normalizeSesEvent(message, snsMessageId, ANY_TIME);
  if (!result.ok) throw new Error(result.message);
  return result.value;
}

const mail = {
  timestamp: '2016-01-27T14:59:38.237Z',
  messageId: '00000138111222aa-33322211-cccc-cccc-cccc-ddddaaaa0680-000000',
  source: 'john@example.com',
  destination: ['jane@example.com'],
  tags: { sluice_id: ['m42'], sluice_tenant: ['acme'], 'ses:configuration-set': ['cs1'] },
};

describe('SES event publishing (AWS notification-contents and event-publishing-retrieving-sns-contents)', () => {
  it('a Permanent bounce (the AWS example) is hard, matched to our id from mail.tags', () => {
    const events = normalized(
      JSON.stringify({
        eventType: 'Bounce',
        bounce: {
          bounceType: 'Permanent',
          bounceSubType: 'General',
          bouncedRecipients: [
            {
              emailAddress: 'jane@example.com',
              action: 'failed',
              status: '5.1.1',
              diagnosticCode: 'smtp; 550 5.1.1 <jane@example.com>... User unknown',
            },
          ],
          timestamp: '2016-01-27T14:59:44.101Z',
          feedbackId: '00000138111222aa-44455566-cccc-cccc-cccc-ddddaaaa068a-000000',
          remoteMtaIp: '127.0.2.0',
          reportingMTA: 'dns; email.example.com',
        },
        mail,
      }) + '\n',
      'sns-1',
    );
    expect(events).toEqual([
      {
        provider: 'ses',
        kind: 'bounced_hard',
        messageId: 'm42',
        tenantId: 'acme',
        campaignId: undefined,
        providerMessageId: mail.messageId,
        recipient: 'jane@example.com',
        at: Date.parse('2016-01-27T14:59:44.101Z'),
        reason: 'smtp; 550 5.1.1 <jane@example.com>... User unknown',
        enhanced: '5.1.1',
        eventId: '00000138111222aa-44455566-cccc-cccc-cccc-ddddaaaa068a-000000/jane@example.com',
      },
    ]);
  });

  it('Transient and Undetermined bounces are soft, one event per recipient', () => {
    const events = normalized(
      {
        eventType: 'Bounce',
        bounce: {
          bounceType: 'Transient',
          bounceSubType: 'MailboxFull',
          bouncedRecipients: [{ emailAddress: 'a@example.com' }, { emailAddress: 'B@example.com', status: '4.2.2' }],
          timestamp: '2016-01-27T14:59:44.101Z',
          feedbackId: 'fb-1',
        },
        mail,
      },
      'sns-2',
    );
    expect(events.map((e) => [e.kind, e.recipient, e.reason, e.eventId])).toEqual([
      ['bounced_soft', 'a@example.com', 'Transient/MailboxFull', 'fb-1/a@example.com'],
      ['bounced_soft', 'b@example.com', 'Transient/MailboxFull', 'fb-1/b@example.com'],
    ]);
    const undetermined = normalized(
      {
        notificationType: 'Bounce',
        bounce: {
          bounceType: 'Undetermined',
          bouncedRecipients: [{ emailAddress: 'c@example.com' }],
          timestamp: '2016-01-27T14:59:44.101Z',
        },
        mail: {},
      },
      'sns-3',
    );
    expect(undetermined).toMatchObject([
      { kind: 'bounced_soft', messageId: undefined, eventId: 'sns-3/c@example.com' },
    ]);
  });

  it('a complaint (the AWS example) always counts, with or without a feedback type', () => {
    const events = normalized(
      {
        eventType: 'Complaint',
        complaint: {
          complainedRecipients: [{ emailAddress: 'richard@example.com' }],
          timestamp: '2016-01-27T14:59:38.237Z',
          feedbackId: '0000013786031775-fea503bc-7497-49e1-881b-a0379bb037d3-000000',
          complaintSubType: null,
          userAgent: 'AnyCompany Feedback Loop (V0.01)',
          complaintFeedbackType: 'abuse',
          arrivalDate: '2016-01-27T14:59:38.237Z',
        },
        mail,
      },
      'sns-4',
    );
    expect(events).toMatchObject([
      { kind: 'complained', recipient: 'richard@example.com', reason: 'complaint: abuse', messageId: 'm42' },
    ]);
  });

  it('Delivery and DeliveryDelay; Send, Open and a non-JSON message give nothing', () => {
    const delivered = normalized(
      {
        eventType: 'Delivery',
        delivery: {
          timestamp: '2016-01-27T14:59:38.237Z',
          processingTimeMillis: 546,
          recipients: ['jane@example.com'],
          smtpResponse: '250 ok:  Message 64111812 accepted',
        },
        mail,
      },
      'sns-5',
    );
    expect(delivered).toMatchObject([
      { kind: 'delivered', eventId: 'sns-5/jane@example.com', reason: '250 ok:  Message 64111812 accepted' },
    ]);
    const delayed = normalized(
      {
        eventType: 'DeliveryDelay',
        deliveryDelay: {
          timestamp: '2016-01-27T14:59:38.237Z',
          delayType: 'MailboxFull',
          expirationTime: '2016-01-28T14:59:38.237Z',
          delayedRecipients: [
            { emailAddress: 'jane@example.com', status: '4.2.2', diagnosticCode: 'smtp; 452 4.2.2 Mailbox full' },
          ],
        },
        mail,
      },
      'sns-6',
    );
    expect(delayed).toMatchObject([{ kind: 'deferred', enhanced: '4.2.2' }]);
    expect(normalized({ eventType: 'Send', mail }, 'x')).toEqual([]);
    expect(normalized({ eventType: 'Open', mail }, 'x')).toEqual([]);
    expect(normalized('Hello from the SNS console', 'x')).toEqual([]);
  });

  it('refuses a bounce or complaint without its time, a recipient without an address, or more recipients than SES sends to', () => {
    const now = Date.parse('2016-01-27T15:00:00Z');
    const bounce = (over: Record<string, unknown>) => ({
      eventType: 'Bounce',
      bounce: { bounceType: 'Permanent', bouncedRecipients: [{ emailAddress: 'a@example.com' }], ...over },
      mail,
    });
    const read = (m: unknown, window: EventWindow = { now }) => normalizeSesEvent(m, 'sns-9', window);
    expect(read(bounce({}))).toMatchObject({ ok: false, code: 'malformed', field: 'Message.bounce.timestamp' });
    expect(read(bounce({ timestamp: 'yesterday' }))).toMatchObject({ field: 'Message.bounce.timestamp' });
    expect(read(bounce({ timestamp: '+275760-09-13T00:00:00.000Z' }))).toMatchObject({
      field: 'Message.bounce.timestamp',
    });
    const at = { timestamp: '2016-01-27T14:59:44.101Z' };
    expect(read(bounce(at), { now: now + 3 * 86_400_000 })).toMatchObject({ field: 'Message.bounce.timestamp' });
    expect(read(bounce({ ...at, bouncedRecipients: [{ emailAddress: 'a@example.com' }, {}] }))).toMatchObject({
      field: 'Message.bounce.bouncedRecipients.1.emailAddress',
    });
    expect(read(bounce({ ...at, bouncedRecipients: 'a@example.com' }))).toMatchObject({
      field: 'Message.bounce.bouncedRecipients',
    });
    expect(read({ eventType: 'Complaint', mail })).toMatchObject({ field: 'Message.complaint' });
    const many = Array.from({ length: SES_MAX_RECIPIENTS + 1 }, (_, i) => ({ emailAddress: `r${i}@example.com` }));
    expect(read(bounce({ ...at, bouncedRecipients: many }))).toMatchObject({ ok: false, code: 'too_many_events' });
    expect(read(bounce(at))).toMatchObject({ ok: true, value: [{ at: Date.parse(at.timestamp) }] });
  });
});
