import { describe, expect, it } from 'vitest';
import { mailgunClient, startSandbox } from './helpers.js';

const DOMAIN = 'mg.sluice.test';

/** What `mailgun.js` rejects with; network errors come back as status 400 with the code as message. */
interface MailgunError {
  type: string;
  status: number;
  message: string;
  details: string;
}

function message(to: string | string[], extra: Record<string, string> = {}) {
  return { from: 'Sender <sender@sluice.test>', to, subject: 'Hello', text: 'Hello there', ...extra };
}

async function failure(promise: Promise<unknown>): Promise<MailgunError> {
  try {
    await promise;
  } catch (error) {
    return error as MailgunError;
  }
  throw new Error('expected the send to fail');
}

describe('Mailgun v3 messages', () => {
  it('accepts with 200 and a Mailgun id, recording Message-ID, v:sluice_id and tags', async () => {
    const sandbox = await startSandbox();
    const sent = await mailgunClient(sandbox.url).messages.create(DOMAIN, {
      ...message(['Bob <bob@example.com>', 'carol@example.org'], {
        subject: 'Hi',
        'h:Message-ID': '<m1@sluice.test>',
        'v:sluice_id': 'mg-1',
      }),
      'o:tag': ['welcome'],
    });
    expect(sent).toMatchObject({ status: 200, message: 'Queued. Thank you.' });
    expect(sent.id).toMatch(/^<\d{14}\.1\.[0-9A-F]{16}@mg\.sluice\.test>$/);
    expect(sandbox.accepted()).toEqual([
      {
        protocol: 'mailgun',
        providerMessageId: sent.id,
        messageId: '<m1@sluice.test>',
        sluiceId: 'mg-1',
        from: 'Sender <sender@sluice.test>',
        to: ['Bob <bob@example.com>', 'carol@example.org'],
        subject: 'Hi',
        domain: 'example.com',
        arrivedAt: expect.any(Number) as number,
        tags: { sluice_id: 'mg-1', 'tag:welcome': '' },
      },
    ]);
  });

  it('accepts a MIME message on messages.mime, reading Message-ID and Subject from it', async () => {
    const sandbox = await startSandbox();
    const mime =
      'From: sender@sluice.test\r\nTo: bob@example.com\r\nSubject: Raw one\r\nMessage-ID: <m2@sluice.test>\r\n\r\nBody\r\n';
    const sent = await mailgunClient(sandbox.url).messages.create(DOMAIN, {
      to: 'bob@example.com',
      message: Buffer.from(mime),
      'v:sluice_id': 'mg-2',
    });
    expect(sent.status).toBe(200);
    expect(sandbox.accepted()).toMatchObject([
      {
        protocol: 'mailgun',
        messageId: '<m2@sluice.test>',
        subject: 'Raw one',
        from: 'sender@sluice.test',
        sluiceId: 'mg-2',
      },
    ]);
  });

  it('throttles above the rate with 429 and Retry-After', async () => {
    const sandbox = await startSandbox({ scenario: { domains: { 'busy.test': { rate: 0.25, burst: 1 } } } });
    const mailgun = mailgunClient(sandbox.url);
    await mailgun.messages.create(DOMAIN, message('a@busy.test'));
    const throttled = await failure(mailgun.messages.create(DOMAIN, message('b@busy.test')));
    expect(throttled).toMatchObject({ type: 'MailgunAPIError', status: 429 });

    // The SDK hides response headers; a plain request shows Retry-After (a token takes 4 s).
    const form = new FormData();
    for (const [k, v] of Object.entries(message('c@busy.test'))) form.append(k, v);
    const res = await fetch(`${sandbox.url}/v3/${DOMAIN}/messages`, { method: 'POST', body: form });
    expect(res.status).toBe(429);
    expect(await res.json()).toEqual({ message: 'Too many requests' });
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(3);
    expect(Number(res.headers.get('retry-after'))).toBeLessThanOrEqual(4);
    expect(sandbox.stats()).toMatchObject({ accepted: 1, throttled: 2 });
  });

  it('answers a hard bounce with 400 and a failure with 500 HTML; accepts blocks and deferrals', async () => {
    const sandbox = await startSandbox({
      scenario: { default: { bounce: ['gone@*'], fail: ['broken@*'], block: ['blocked@*'], defer: ['full@*'] } },
    });
    const mailgun = mailgunClient(sandbox.url);
    const bounce = await failure(mailgun.messages.create(DOMAIN, message('gone@example.com')));
    expect(bounce).toMatchObject({
      status: 400,
      details: "'to' parameter is not a valid address. please check documentation",
    });
    const fail = await failure(mailgun.messages.create(DOMAIN, message('broken@example.com')));
    expect(fail.status).toBe(500);
    expect(fail.details).toContain('<h1>500 Internal Server Error</h1>');

    await mailgun.messages.create(DOMAIN, message('blocked@example.com'));
    await mailgun.messages.create(DOMAIN, message('full@example.com'));
    expect(sandbox.stats()).toMatchObject({ accepted: 2, rejected: 1, deferred: 1 });
  });

  it('records a message to drop after its data, then destroys the connection unanswered', async () => {
    const sandbox = await startSandbox({ scenario: { default: { dropAfterData: ['lost@example.com'] } } });
    const dropped = await failure(
      mailgunClient(sandbox.url).messages.create(
        DOMAIN,
        message('lost@example.com', { 'h:Message-ID': '<m3@sluice.test>' }),
      ),
    );
    // The SDK's trap: no response at all becomes status 400 with the error code as message.
    expect(dropped).toMatchObject({ status: 400, message: 'ECONNRESET' });
    expect(sandbox.accepted()).toMatchObject([{ protocol: 'mailgun', messageId: '<m3@sluice.test>' }]);
    expect(sandbox.stats()).toMatchObject({ accepted: 1, dropped: 1 });
  });

  it('answers after the latency: a client with a shorter timeout times out after submitting', async () => {
    const sandbox = await startSandbox({ scenario: { domains: { 'slow.test': { latencyMs: 600 } } } });
    const start = Date.now();
    const timedOut = await failure(
      mailgunClient(sandbox.url, 'key', 150).messages.create(DOMAIN, message('a@slow.test')),
    );
    expect(timedOut).toMatchObject({ status: 400, message: 'ECONNABORTED' });
    expect(Date.now() - start).toBeLessThan(550);
    expect(sandbox.accepted()).toMatchObject([{ protocol: 'mailgun', domain: 'slow.test' }]);
  });

  it('answers 401 Forbidden when mailgunApiKey is set and the Basic auth key differs', async () => {
    const sandbox = await startSandbox({ mailgunApiKey: 'key-right' });
    const denied = await failure(
      mailgunClient(sandbox.url, 'key-wrong').messages.create(DOMAIN, message('a@example.com')),
    );
    expect(denied).toMatchObject({ status: 401, details: 'Forbidden' });
    await mailgunClient(sandbox.url, 'key-right').messages.create(DOMAIN, message('a@example.com'));
    expect(sandbox.accepted()).toHaveLength(1);
  });

  it('answers a missing field with 400 naming it', async () => {
    const sandbox = await startSandbox();
    const mailgun = mailgunClient(sandbox.url);
    const { from: _from, ...noFrom } = message('a@example.com');
    const { subject: _subject, ...noSubject } = message('a@example.com');
    const { text: _text, ...noText } = message('a@example.com');
    const errors = [
      await failure(mailgun.messages.create(DOMAIN, noFrom)),
      await failure(mailgun.messages.create(DOMAIN, { ...message('a@example.com'), to: [] })),
      await failure(mailgun.messages.create(DOMAIN, noSubject)),
      await failure(mailgun.messages.create(DOMAIN, { ...noText, html: undefined } as never)),
    ];
    expect(errors.map((e) => [e.status, e.details])).toEqual([
      [400, "'from' parameter is missing"],
      [400, "'to' parameter is missing"],
      [400, "'subject' parameter is missing"],
      [400, "Need at least one of 'text', 'html' or 'template' parameters specified"],
    ]);
    expect(sandbox.accepted()).toEqual([]);
  });
});
