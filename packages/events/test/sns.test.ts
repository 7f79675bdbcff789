import { describe, expect, it } from 'vitest';
import {
  parseSnsEnvelope,
  snsStringToSign,
  verifySnsMessage,
  type SnsEnvelope,
  type VerifySnsOptions,
} from '@sluice/events';
import { createSnsSigner } from './support/sns-signer.js';

const signer = createSnsSigner();
const TOPIC = 'arn:aws:sns:us-east-1:123456789012:ses-events';
const CERT_URL = 'https://sns.us-east-1.amazonaws.com/SimpleNotificationService-0123456789abcdef.pem';

// The envelope of the AWS docs (http-notification-json.html), as the reference quotes it.
const notification = (over: Partial<SnsEnvelope> = {}): SnsEnvelope =>
  signer.sign({
    Type: 'Notification',
    MessageId: '19ba9823-d7f2-53c1-860e-cb10e0d13dfc',
    TopicArn: TOPIC,
    Subject: 'Amazon SES Email Event Notification',
    Message: '{"eventType":"Bounce","bounce":{},"mail":{}}\n',
    Timestamp: '2026-11-30T08:00:02.000Z',
    SignatureVersion: '2',
    SigningCertURL: CERT_URL,
    UnsubscribeURL: 'https://sns.us-east-1.amazonaws.com/?Action=Unsubscribe&SubscriptionArn=x',
    ...over,
  });

const confirmation = (over: Partial<SnsEnvelope> = {}): SnsEnvelope =>
  signer.sign({
    Type: 'SubscriptionConfirmation',
    MessageId: '165545c9-2a5c-472c-8df2-7ff2be2b3b1b',
    TopicArn: TOPIC,
    Message: 'You have chosen to subscribe to the topic.',
    Token: '2336412f37fb687f5d51e6e241d09c805a5a57b30d712f794cc5f6a988666d92768dd60a747ba6f3',
    SubscribeURL: `https://sns.us-east-1.amazonaws.com/?Action=ConfirmSubscription&TopicArn=${TOPIC}&Token=2336412f`,
    Timestamp: '2026-11-30T08:00:00.000Z',
    SignatureVersion: '1',
    SigningCertURL: CERT_URL,
    ...over,
  });

function options(over: Partial<VerifySnsOptions> = {}): VerifySnsOptions & { fetched: string[] } {
  const fetched: string[] = [];
  return {
    fetched,
    topicArns: [TOPIC],
    fetchCertificate: async (url) => {
      fetched.push(url);
      return signer.certificate;
    },
    ...over,
  };
}

describe('SNS signature (AWS sns-verify-signature-of-message, aws-js-sns-message-validator)', () => {
  it('signs a Notification over Message, MessageId, Subject, Timestamp, TopicArn, Type in that order', () => {
    const e = notification();
    expect(snsStringToSign(e)).toBe(
      `Message\n${e.Message}\nMessageId\n${e.MessageId}\nSubject\n${e.Subject}\nTimestamp\n${e.Timestamp}\nTopicArn\n${TOPIC}\nType\nNotification\n`,
    );
    // Subject only when present.
    expect(snsStringToSign({ ...e, Subject: undefined })).not.toContain('Subject');
  });

  it('accepts a Notification signed with SignatureVersion 2 (SHA256) and a confirmation with 1 (SHA1)', async () => {
    expect(await verifySnsMessage(JSON.stringify(notification()), options())).toMatchObject({
      ok: true,
      value: { Type: 'Notification' },
    });
    expect(await verifySnsMessage(JSON.stringify(confirmation()), options())).toMatchObject({
      ok: true,
      value: { Type: 'SubscriptionConfirmation' },
    });
  });

  it('refuses a message changed after signing, and a signature of the wrong version', async () => {
    const changed = { ...notification(), Message: '{"eventType":"Complaint"}' };
    expect(await verifySnsMessage(JSON.stringify(changed), options())).toMatchObject({
      ok: false,
      code: 'bad_signature',
    });
    const relabelled = { ...notification(), SignatureVersion: '1' };
    expect(await verifySnsMessage(JSON.stringify(relabelled), options())).toMatchObject({
      ok: false,
      code: 'bad_signature',
    });
  });

  it('refuses a certificate off an SNS host, over http or not a .pem, without fetching it', async () => {
    for (const url of [
      'https://sns.us-east-1.amazonaws.com.evil.test/cert.pem',
      'https://evil.test/sns.us-east-1.amazonaws.com.pem',
      'http://sns.us-east-1.amazonaws.com/cert.pem',
      'https://sns.us-east-1.amazonaws.com/cert.txt',
    ]) {
      const o = options();
      expect(await verifySnsMessage(JSON.stringify(notification({ SigningCertURL: url })), o)).toMatchObject({
        ok: false,
        code: 'forbidden_cert_url',
      });
      expect(o.fetched).toEqual([]);
    }
    // China regions are SNS hosts too.
    const cn = options();
    expect(
      await verifySnsMessage(
        JSON.stringify(notification({ SigningCertURL: 'https://sns.cn-north-1.amazonaws.com.cn/c.pem' })),
        cn,
      ),
    ).toMatchObject({ ok: true });
  });

  it('refuses a topic not in the allow-list, and accepts none when the list is empty', async () => {
    expect(
      await verifySnsMessage(JSON.stringify(notification({ TopicArn: 'arn:aws:sns:us-east-1:999:other' })), options()),
    ).toMatchObject({
      ok: false,
      code: 'forbidden_topic',
    });
    expect(await verifySnsMessage(JSON.stringify(notification()), options({ topicArns: [] }))).toMatchObject({
      ok: false,
      code: 'forbidden_topic',
    });
  });

  it('refuses a signed confirmation whose SubscribeURL is not on an SNS host (no SSRF)', async () => {
    const e = confirmation({ SubscribeURL: 'https://169.254.169.254/latest/meta-data/' });
    expect(await verifySnsMessage(JSON.stringify(e), options())).toMatchObject({
      ok: false,
      code: 'forbidden_subscribe_url',
    });
  });

  it('fetches each certificate once, and tries again after a failed fetch', async () => {
    const cache = new Map();
    const o = options({ cache });
    await verifySnsMessage(JSON.stringify(notification()), o);
    await verifySnsMessage(JSON.stringify(notification({ MessageId: 'other' })), o);
    expect(o.fetched).toEqual([CERT_URL]);
    let calls = 0;
    const flaky = options({
      cache: new Map(),
      fetchCertificate: async () => {
        if (calls++ === 0) throw new Error('ETIMEDOUT');
        return signer.certificate;
      },
    });
    expect(await verifySnsMessage(JSON.stringify(notification()), flaky)).toMatchObject({
      ok: false,
      code: 'certificate_unavailable',
    });
    expect(await verifySnsMessage(JSON.stringify(notification()), flaky)).toMatchObject({ ok: true });
  });

  it('refuses a message older than the window when one is given', async () => {
    const now = () => Date.parse('2026-12-05T08:00:00.000Z');
    expect(
      await verifySnsMessage(JSON.stringify(notification()), options({ now, maxAgeSeconds: 86_400 })),
    ).toMatchObject({ ok: false, code: 'stale' });
    expect(
      await verifySnsMessage(JSON.stringify(notification()), options({ now, maxAgeSeconds: 7 * 86_400 })),
    ).toMatchObject({ ok: true });
  });

  it('says what is malformed, and reads the Lambda spelling SigningCertUrl', async () => {
    expect(await verifySnsMessage('not json', options())).toMatchObject({ ok: false, code: 'malformed' });
    expect(await verifySnsMessage('{"Type":"Notification"}', options())).toMatchObject({
      ok: false,
      code: 'malformed',
      message: 'MessageId is missing',
    });
    const { SigningCertURL, ...rest } = notification();
    expect(parseSnsEnvelope({ ...rest, SigningCertUrl: SigningCertURL })).toMatchObject({
      ok: true,
      value: { SigningCertURL },
    });
  });
});
