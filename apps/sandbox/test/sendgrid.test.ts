import type { MailDataRequired } from '@sendgrid/mail';
import { describe, expect, it } from 'vitest';
import { sendgridClient, sesClient, simpleEmail, startSandbox } from './helpers.js';

/** What `@sendgrid/mail` rejects with: a `ResponseError`, or the raw axios error without a response. */
interface SendgridError {
  code: number | string;
  response?: { body: unknown; headers: Record<string, string> };
}

function mail(to: string, extra: Partial<MailDataRequired> = {}): MailDataRequired {
  return { from: 'sender@sluice.test', to, subject: 'Hello', text: 'Hello there', ...extra };
}

async function failure(promise: Promise<unknown>): Promise<SendgridError> {
  try {
    await promise;
  } catch (error) {
    return error as SendgridError;
  }
  throw new Error('expected the send to fail');
}

describe('SendGrid v3 mail send', () => {
  it('reads each personalization as its own copy: its To, subject (substitutions made), Message-ID and custom args', async () => {
    const sandbox = await startSandbox();
    await sendgridClient(sandbox.url).send({
      from: 'news@sluice.test',
      subject: 'Letter for -name-',
      content: [{ type: 'text/plain', value: 'Dear -name-' }],
      customArgs: { campaign: 'c1' },
      personalizations: [
        {
          to: 'ann@a.test',
          substitutions: { '-name-': 'Ann' },
          headers: { 'Message-ID': '<p1@sluice.test>' },
          customArgs: { sluice_id: 'p-1' },
        },
        {
          to: 'bo@b.test',
          subject: 'Only for -name-',
          substitutions: { '-name-': 'Bo' },
          headers: { 'Message-ID': '<p2@sluice.test>' },
          customArgs: { sluice_id: 'p-2' },
        },
      ],
      substitutionWrappers: ['', ''],
    } as MailDataRequired);
    const got = sandbox.accepted().map((a) => [a.to, a.subject, a.messageId, a.sluiceId, a.domain, a.tags.campaign]);
    expect(got).toEqual([
      [['ann@a.test'], 'Letter for Ann', '<p1@sluice.test>', 'p-1', 'a.test', 'c1'],
      [['bo@b.test'], 'Only for Bo', '<p2@sluice.test>', 'p-2', 'b.test', 'c1'],
    ]);
    expect(new Set(sandbox.accepted().map((a) => a.providerMessageId)).size).toBe(1);
  });

  it('accepts with 202, an X-Message-Id and rate-limit headers, recording Message-ID, sluice_id and tags', async () => {
    const sandbox = await startSandbox();
    const [response] = await sendgridClient(sandbox.url).send(
      mail('Bob <bob@example.com>', {
        subject: 'Hi',
        headers: { 'Message-ID': '<g1@sluice.test>' },
        customArgs: { sluice_id: 'sg-1', campaign: 'c1' },
        categories: ['welcome'],
      }),
    );
    expect(response.statusCode).toBe(202);
    expect(response.body).toBe('');
    const headers = response.headers as Record<string, string>;
    const id = headers['x-message-id'];
    expect(id).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(headers).toMatchObject({
      'x-ratelimit-limit': '1000',
      'x-ratelimit-remaining': '1000',
      'x-ratelimit-reset': expect.stringMatching(/^\d+$/) as string,
    });
    expect(sandbox.accepted()).toEqual([
      {
        protocol: 'sendgrid',
        providerMessageId: id,
        messageId: '<g1@sluice.test>',
        sluiceId: 'sg-1',
        from: 'sender@sluice.test',
        to: ['bob@example.com'],
        subject: 'Hi',
        domain: 'example.com',
        arrivedAt: expect.any(Number) as number,
        tags: { sluice_id: 'sg-1', campaign: 'c1', 'category:welcome': '' },
      },
    ]);
  });

  it('throttles above the rate with 429 and X-RateLimit-* naming when a token is back', async () => {
    const sandbox = await startSandbox({ scenario: { domains: { 'busy.test': { rate: 0.5, burst: 2 } } } });
    const sendgrid = sendgridClient(sandbox.url);
    const [first] = await sendgrid.send(mail('a@busy.test'));
    expect(first.headers).toMatchObject({ 'x-ratelimit-limit': '2', 'x-ratelimit-remaining': '1' });
    await sendgrid.send(mail('b@busy.test'));

    const now = Date.now() / 1000;
    const throttled = await failure(sendgrid.send(mail('c@busy.test')));
    expect(throttled.code).toBe(429);
    expect(throttled.response?.body).toEqual({ errors: [{ field: null, message: 'too many requests' }] });
    expect(throttled.response?.headers).toMatchObject({ 'x-ratelimit-limit': '2', 'x-ratelimit-remaining': '0' });
    // One token takes 2 s at 0.5/s.
    const reset = Number(throttled.response?.headers['x-ratelimit-reset']);
    expect(reset).toBeGreaterThanOrEqual(Math.floor(now + 1));
    expect(reset).toBeLessThanOrEqual(Math.ceil(now + 3));
    expect(sandbox.stats().byDomain['busy.test']).toMatchObject({ accepted: 2, throttled: 1 });
  });

  it('answers a hard bounce with 400 naming the field, a failure with 500; accepts blocks and deferrals', async () => {
    const sandbox = await startSandbox({
      scenario: {
        default: { bounce: ['gone@*'], fail: ['broken@*'], block: ['blocked@*'], defer: ['full@*'], greylist: true },
      },
    });
    const sendgrid = sendgridClient(sandbox.url);
    const bounce = await failure(
      sendgrid.send({
        ...mail('ok@example.com'),
        personalizations: [{ to: 'ok@example.com', cc: 'gone@example.com' }],
      }),
    );
    expect(bounce.code).toBe(400);
    expect(bounce.response?.body).toEqual({
      errors: [
        {
          message: 'Does not contain a valid address.',
          field: 'personalizations.0.cc.0.email',
          help: 'http://sendgrid.com/docs/API_Reference/Web_API_v3/Mail/errors.html#message.personalizations.to',
        },
      ],
    });
    const fail = await failure(sendgrid.send(mail('broken@example.com')));
    expect(fail.code).toBe(500);
    expect(fail.response?.body).toEqual({ errors: [{ field: null, message: 'internal error' }] });

    await sendgrid.send(mail('blocked@example.com'));
    await sendgrid.send(mail('full@example.com'));
    expect(sandbox.stats()).toMatchObject({ accepted: 2, rejected: 1, deferred: 1 });
  });

  it('records a message to drop after its data, then destroys the connection unanswered', async () => {
    const sandbox = await startSandbox({ scenario: { default: { dropAfterData: ['lost@example.com'] } } });
    const sendgrid = sendgridClient(sandbox.url);
    const dropped = await failure(
      sendgrid.send(mail('lost@example.com', { headers: { 'Message-ID': '<g2@sluice.test>' } })),
    );
    expect(dropped.code).toBe('ECONNRESET');
    expect(dropped.response).toBeUndefined();
    expect(sandbox.accepted()).toMatchObject([{ protocol: 'sendgrid', messageId: '<g2@sluice.test>' }]);
    expect(sandbox.stats()).toMatchObject({ accepted: 1, dropped: 1 });
  });

  it('answers after the latency: a client with a shorter timeout times out after submitting', async () => {
    const sandbox = await startSandbox({ scenario: { domains: { 'slow.test': { latencyMs: 600 } } } });
    const start = Date.now();
    const timedOut = await failure(sendgridClient(sandbox.url, 'SG.key', 150).send(mail('a@slow.test')));
    expect(timedOut.code).toBe('ECONNABORTED');
    expect(Date.now() - start).toBeLessThan(550);
    expect(sandbox.accepted()).toMatchObject([{ protocol: 'sendgrid', domain: 'slow.test' }]);
  });

  it('answers 401 when sendgridApiKey is set and the bearer key differs', async () => {
    // SES's key check does not apply to SendGrid requests.
    const sandbox = await startSandbox({ sendgridApiKey: 'SG.right', accessKeyId: 'AKIDTEST' });
    const denied = await failure(sendgridClient(sandbox.url, 'SG.wrong').send(mail('a@example.com')));
    expect(denied.code).toBe(401);
    expect(denied.response?.body).toEqual({
      errors: [
        { field: null, message: 'The provided authorization grant is invalid, expired, or revoked', help: null },
      ],
    });
    await sendgridClient(sandbox.url, 'SG.right').send(mail('a@example.com'));
    expect(sandbox.accepted()).toHaveLength(1);
  });

  it('answers invalid requests with 400 naming the field; a template needs no subject or content', async () => {
    const sandbox = await startSandbox();
    const post = async (body: unknown) => {
      const res = await fetch(`${sandbox.url}/v3/mail/send`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      return { status: res.status, body: (await res.json()) as { errors: { field: string | null }[] } };
    };
    const content = [{ type: 'text/plain', value: 'x' }];
    const to = [{ to: [{ email: 'a@example.com' }] }];
    const cases: [unknown, string | null][] = [
      [{ personalizations: to, subject: 's', content }, 'from.email'],
      [{ from: { email: 'nope' }, personalizations: to, subject: 's', content }, 'from.email'],
      [{ from: { email: 'f@x.test' }, subject: 's', content }, 'personalizations'],
      [{ from: { email: 'f@x.test' }, personalizations: [{ to: [] }], subject: 's', content }, 'personalizations.0.to'],
      [{ from: { email: 'f@x.test' }, personalizations: to, content }, 'subject'],
      [{ from: { email: 'f@x.test' }, personalizations: to, subject: 's' }, 'content'],
    ];
    for (const [body, field] of cases) {
      const res = await post(body);
      expect(res.status).toBe(400);
      expect(res.body.errors[0]?.field).toBe(field);
    }
    await sendgridClient(sandbox.url).send({
      from: 'f@x.test',
      to: 'a@example.com',
      templateId: 'd-123',
      dynamicTemplateData: { name: 'A' },
    });
    expect(sandbox.accepted()).toMatchObject([{ subject: 'd-123' }]);
  });

  it('counts a Message-ID already accepted on another protocol as a duplicate', async () => {
    const sandbox = await startSandbox();
    await sesClient(sandbox.url).send(simpleEmail('a@example.com', { messageId: '<x1@sluice.test>' }));
    await sendgridClient(sandbox.url).send(mail('a@example.com', { headers: { 'message-id': '<x1@sluice.test>' } }));
    expect(sandbox.stats()).toMatchObject({ accepted: 2, duplicates: 1 });
  });
});
