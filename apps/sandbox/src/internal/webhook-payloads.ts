import { createHmac, randomBytes, randomUUID, sign, type KeyObject } from 'node:crypto';
import type { AcceptedMessage } from '../recorder.js';
import { domainOf } from './address.js';

/** What the receiver did with one accepted message, reported later by its ESP. */
export type ReportKind = 'bounce' | 'complaint' | 'delivery';

/** One event to report: a recipient of an accepted message. */
export interface Report {
  kind: ReportKind;
  message: AcceptedMessage;
  recipient: string;
  /** When it happened, epoch ms. */
  at: number;
}

/** A request ready to post. */
export interface SignedRequest {
  headers: Record<string, string>;
  body: string;
}

const USER_UNKNOWN = (address: string): string =>
  `550 5.1.1 <${address}>: Recipient address rejected: User unknown in virtual mailbox table`;
const DELIVERED = '250 2.0.0 OK: queued';

const mx = (recipient: string): string => `mx.${domainOf(recipient)}`;

/** Tags the sender set, without the sandbox's own spellings of categories and Mailgun tags. */
function variables(tags: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(tags)) if (!k.startsWith('category:') && !k.startsWith('tag:')) out[k] = v;
  return out;
}

function labels(tags: Record<string, string>, prefix: string): string[] {
  return Object.keys(tags)
    .filter((k) => k.startsWith(prefix))
    .map((k) => k.slice(prefix.length));
}

/** The SES event (bounce, complaint or delivery) an SNS notification carries as its `Message`. */
function sesEvent(report: Report): Record<string, unknown> {
  const { message, recipient } = report;
  const at = new Date(report.at).toISOString();
  const feedbackId = `0100${report.at.toString(16).padStart(12, '0')}-${randomUUID()}-000000`;
  const tags: Record<string, string[]> = {};
  for (const [k, v] of Object.entries(variables(message.tags))) tags[k] = [v];
  const event: Record<string, unknown> = {
    eventType: { bounce: 'Bounce', complaint: 'Complaint', delivery: 'Delivery' }[report.kind],
    mail: {
      timestamp: new Date(message.arrivedAt).toISOString(),
      source: message.from,
      sendingAccountId: '123456789012',
      messageId: message.providerMessageId,
      destination: message.to,
      headersTruncated: false,
      tags,
    },
  };
  if (report.kind === 'bounce') {
    event.bounce = {
      feedbackId,
      bounceType: 'Permanent',
      bounceSubType: 'General',
      bouncedRecipients: [
        {
          emailAddress: recipient,
          action: 'failed',
          status: '5.1.1',
          diagnosticCode: `smtp; ${USER_UNKNOWN(recipient)}`,
        },
      ],
      timestamp: at,
      reportingMTA: 'dns; a8-70.smtp-out.amazonses.com',
      remoteMtaIp: '127.0.2.0',
    };
  } else if (report.kind === 'complaint') {
    event.complaint = {
      feedbackId,
      complaintSubType: null,
      complainedRecipients: [{ emailAddress: recipient }],
      timestamp: at,
      userAgent: 'Sandbox Feedback Loop (V0.01)',
      complaintFeedbackType: 'abuse',
      arrivalDate: at,
    };
  } else {
    event.delivery = {
      timestamp: at,
      processingTimeMillis: Math.max(0, report.at - message.arrivedAt),
      recipients: [recipient],
      smtpResponse: DELIVERED,
      reportingMTA: 'a8-70.smtp-out.amazonses.com',
      remoteMtaIp: '127.0.2.0',
    };
  }
  return event;
}

/**
 * SES configuration-set event publishing (what carries `mail.tags`) inside an SNS
 * notification, signed with SignatureVersion 2 (RSA-SHA256) over SNS's string to sign.
 */
export function sesNotification(
  report: Report,
  sns: { privateKey: KeyObject; certUrl: string; topicArn: string; unsubscribeBase: string },
): SignedRequest {
  const event = sesEvent(report);
  const subscription = `${sns.topicArn}:${randomUUID()}`;
  const fields = {
    Type: 'Notification',
    MessageId: randomUUID(),
    TopicArn: sns.topicArn,
    Subject: 'Amazon SES Email Event Notification',
    Message: `${JSON.stringify(event)}\n`,
    Timestamp: new Date().toISOString(),
  };
  // SNS's string to sign: these keys in this order, `Key\nValue\n` each (reference §4.1).
  const order = ['Message', 'MessageId', 'Subject', 'Timestamp', 'TopicArn', 'Type'] as const;
  const stringToSign = order.map((k) => `${k}\n${fields[k]}\n`).join('');
  const envelope = {
    ...fields,
    SignatureVersion: '2',
    Signature: sign('RSA-SHA256', Buffer.from(stringToSign, 'utf8'), sns.privateKey).toString('base64'),
    SigningCertURL: sns.certUrl,
    UnsubscribeURL: `${sns.unsubscribeBase}?Action=Unsubscribe&SubscriptionArn=${encodeURIComponent(subscription)}`,
  };
  return {
    headers: {
      'content-type': 'text/plain; charset=UTF-8',
      'user-agent': 'Amazon Simple Notification Service Agent',
      'x-amz-sns-message-type': 'Notification',
      'x-amz-sns-message-id': fields.MessageId,
      'x-amz-sns-topic-arn': sns.topicArn,
      'x-amz-sns-subscription-arn': subscription,
    },
    body: JSON.stringify(envelope),
  };
}

/**
 * SendGrid's Event Webhook: a JSON array with `\r\n` after each event, custom_args as
 * top-level keys, ECDSA P-256 signature over `timestamp + body`.
 */
export function sendgridEvents(report: Report, privateKey: KeyObject): SignedRequest {
  const { message, recipient } = report;
  const event: Record<string, unknown> = {
    ...variables(message.tags),
    email: recipient,
    timestamp: Math.floor(report.at / 1000),
    'smtp-id': message.messageId ?? `<${message.providerMessageId}@ismtpd0001p1sandbox.sendgrid.net>`,
    event: { bounce: 'bounce', complaint: 'spamreport', delivery: 'delivered' }[report.kind],
    sg_event_id: randomBytes(36).toString('base64url'),
    sg_message_id: `${message.providerMessageId}.filterdrecv-sandbox-0-0`,
  };
  const categories = labels(message.tags, 'category:');
  if (categories.length > 0) event.category = categories;
  if (report.kind === 'bounce') {
    Object.assign(event, {
      reason: USER_UNKNOWN(recipient),
      status: '5.1.1',
      type: 'bounce',
      bounce_classification: 'Invalid Address',
      tls: 1,
    });
  } else if (report.kind === 'delivery') {
    Object.assign(event, { response: DELIVERED, tls: 1, ip: '127.0.0.1' });
  }
  const body = `[${JSON.stringify(event)}]\r\n`;
  const timestamp = String(Math.floor(Date.now() / 1000));
  return {
    headers: {
      'content-type': 'application/json',
      'user-agent': 'SendGrid Event API',
      'x-twilio-email-event-webhook-signature': sign('sha256', Buffer.from(timestamp + body), privateKey).toString(
        'base64',
      ),
      'x-twilio-email-event-webhook-timestamp': timestamp,
    },
    body,
  };
}

/** A Mailgun webhook: `{ signature, "event-data" }`, HMAC-SHA256 of `timestamp + token`. */
export function mailgunEvent(report: Report, signingKey: string): SignedRequest {
  const { message, recipient } = report;
  const timestamp = String(Math.floor(Date.now() / 1000));
  const token = randomBytes(25).toString('hex');
  const data: Record<string, unknown> = {
    id: randomBytes(16).toString('base64url'),
    timestamp: report.at / 1000,
    'log-level': report.kind === 'delivery' ? 'info' : report.kind === 'bounce' ? 'error' : 'warn',
    event: { bounce: 'failed', complaint: 'complained', delivery: 'delivered' }[report.kind],
    recipient,
    'recipient-domain': domainOf(recipient),
    tags: labels(message.tags, 'tag:'),
    'user-variables': variables(message.tags),
    message: {
      headers: {
        to: message.to.join(', '),
        'message-id': message.providerMessageId.replace(/^<(.*)>$/, '$1'),
        from: message.from,
        subject: message.subject ?? '',
      },
    },
  };
  if (report.kind === 'bounce') {
    Object.assign(data, { severity: 'permanent', reason: 'bounce' });
    data['delivery-status'] = {
      tls: true,
      'mx-host': mx(recipient),
      'attempt-no': 1,
      description: '',
      code: 550,
      message: USER_UNKNOWN(recipient).slice(4),
      'certificate-verified': true,
    };
  } else if (report.kind === 'delivery') {
    data['delivery-status'] = { tls: true, 'mx-host': mx(recipient), 'attempt-no': 1, code: 250, message: 'OK' };
  }
  const signature = createHmac('sha256', signingKey)
    .update(timestamp + token)
    .digest('hex');
  return {
    headers: { 'content-type': 'application/json', 'user-agent': 'mailgun/treq-16.12.0' },
    body: JSON.stringify({ signature: { timestamp, token, signature }, 'event-data': data }),
  };
}
