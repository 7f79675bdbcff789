import { SendEmailCommand } from '@aws-sdk/client-sesv2';
import { describe, expect, it } from 'vitest';
import { settle, sesClient, simpleEmail, startSandbox, type SdkError } from './helpers.js';

describe('SendEmail', () => {
  it('accepts a message and records its Message-ID, sluice_id tag and arrival time', async () => {
    const sandbox = await startSandbox();
    const ses = sesClient(sandbox.url);
    const before = Date.now();
    const out = await ses.send(
      simpleEmail('Alice <Alice@Example.com>', { messageId: '<m1@sluice.test>', sluiceId: 's-1', subject: 'Hi' }),
    );
    const after = Date.now();

    expect(out.MessageId).toMatch(/^0100[0-9a-f]{12}-[0-9a-f-]{36}-000000$/);
    expect(out.$metadata.httpStatusCode).toBe(200);
    expect(out.$metadata.requestId).toMatch(/^[0-9a-f-]{36}$/);
    const [message, ...rest] = sandbox.accepted();
    expect(rest).toEqual([]);
    expect(message).toEqual({
      protocol: 'ses',
      providerMessageId: out.MessageId,
      messageId: '<m1@sluice.test>',
      sluiceId: 's-1',
      from: 'sender@sluice.test',
      to: ['Alice <Alice@Example.com>'],
      subject: 'Hi',
      domain: 'example.com',
      arrivedAt: expect.any(Number) as number,
      tags: { sluice_id: 's-1' },
    });
    expect(message?.arrivedAt).toBeGreaterThanOrEqual(before);
    expect(message?.arrivedAt).toBeLessThanOrEqual(after);
    expect(sandbox.stats()).toEqual({
      accepted: 1,
      throttled: 0,
      rejected: 0,
      deferred: 0,
      dropped: 0,
      duplicates: 0,
      webhooksSent: 0,
      webhooksFailed: 0,
      webhooksRedelivered: 0,
      firstArrivedAt: message?.arrivedAt,
      lastArrivedAt: message?.arrivedAt,
      byDomain: { 'example.com': { accepted: 1, throttled: 0, rejected: 0, deferred: 0, dropped: 0 } },
    });
  });

  it('reads Subject and Message-ID from a raw MIME message', async () => {
    const sandbox = await startSandbox();
    const ses = sesClient(sandbox.url);
    const mime =
      'From: sender@sluice.test\r\nTo: bob@example.org\r\nSubject: Raw one\r\nMessage-ID:\r\n <raw1@sluice.test>\r\n\r\nBody\r\n';
    await ses.send(
      new SendEmailCommand({
        FromEmailAddress: 'sender@sluice.test',
        Destination: { ToAddresses: ['bob@example.org'] },
        Content: { Raw: { Data: new TextEncoder().encode(mime) } },
      }),
    );
    expect(sandbox.accepted()).toMatchObject([
      { subject: 'Raw one', messageId: '<raw1@sluice.test>', domain: 'example.org' },
    ]);
  });

  it('hard-bounces listed addresses and globs with MessageRejected, recording nothing as accepted', async () => {
    const sandbox = await startSandbox({
      scenario: {
        default: { bounce: ['bounce-*@example.net'] },
        domains: { 'example.com': { bounce: ['Nobody@Example.com'] } },
      },
    });
    const ses = sesClient(sandbox.url);

    const { errors } = await settle([
      ses.send(simpleEmail('nobody@example.com')),
      ses.send(simpleEmail('bounce-42@example.net')),
    ]);
    expect(errors.map((e) => [e.name, e.$metadata?.httpStatusCode])).toEqual([
      ['MessageRejected', 400],
      ['MessageRejected', 400],
    ]);
    expect(errors[0]?.message).toBe('Email address rejected: nobody@example.com (hard bounce)');
    expect(sandbox.accepted()).toEqual([]);
    expect(sandbox.stats()).toMatchObject({ accepted: 0, rejected: 2, byDomain: { 'example.com': { rejected: 1 } } });

    await ses.send(simpleEmail('somebody@example.com'));
    expect(sandbox.accepted()).toHaveLength(1);
  });

  it('throttles a domain above its rate with 429 TooManyRequestsException; other domains are unaffected', async () => {
    // A slow refill, so that the 30 sends arriving over a loaded machine's second earn no token.
    const sandbox = await startSandbox({ scenario: { domains: { 'slow.test': { rate: 0.5, burst: 10 } } } });
    const ses = sesClient(sandbox.url);

    const { ok, errors } = await settle([
      ...Array.from({ length: 30 }, (_, i) => ses.send(simpleEmail(`user${i}@slow.test`))),
      ...Array.from({ length: 30 }, (_, i) => ses.send(simpleEmail(`user${i}@fast.test`))),
    ]);

    expect(ok).toHaveLength(40);
    expect(errors).toHaveLength(20);
    for (const error of errors) {
      expect(error.name).toBe('TooManyRequestsException');
      expect(error.message).toBe('Maximum sending rate exceeded.');
      expect(error.$metadata?.httpStatusCode).toBe(429);
    }
    expect(sandbox.stats().byDomain).toEqual({
      'slow.test': { accepted: 10, throttled: 20, rejected: 0, deferred: 0, dropped: 0 },
      'fast.test': { accepted: 30, throttled: 0, rejected: 0, deferred: 0, dropped: 0 },
    });
    expect(sandbox.accepted().filter((m) => m.domain === 'slow.test')).toHaveLength(10);
  });

  it('answers a transient failure with 500 InternalFailure; accepts what only an SMTP receiver refuses', async () => {
    const sandbox = await startSandbox({
      scenario: {
        default: {
          fail: ['broken@*'],
          block: ['blocked@*'],
          defer: ['full@*'],
          dropBeforeData: ['void@*'],
          greylist: true,
        },
      },
    });
    const ses = sesClient(sandbox.url);
    await expect(ses.send(simpleEmail('broken@example.com'))).rejects.toMatchObject({
      name: 'InternalFailure',
      $metadata: { httpStatusCode: 500 },
    });
    for (const to of ['blocked@example.com', 'full@example.com', 'void@example.com']) await ses.send(simpleEmail(to));
    expect(sandbox.stats()).toMatchObject({ accepted: 3, deferred: 1, rejected: 0, dropped: 0 });
  });

  it('records a message to drop after its body arrived, then destroys the connection unanswered', async () => {
    const sandbox = await startSandbox({ scenario: { default: { dropAfterData: ['lost@example.com'] } } });
    const error = await sesClient(sandbox.url)
      .send(simpleEmail('lost@example.com', { messageId: '<lost1@sluice.test>' }))
      .then(
        () => undefined,
        (e: unknown) => e as SdkError,
      );
    // A network error: no HTTP status reached the client.
    expect(error).toBeDefined();
    expect(error?.$metadata?.httpStatusCode).toBeUndefined();
    expect(sandbox.accepted()).toMatchObject([{ protocol: 'ses', messageId: '<lost1@sluice.test>' }]);
    expect(sandbox.stats()).toMatchObject({ accepted: 1, dropped: 1 });
  });

  it('adds the domain latency before answering, but records the arrival time before it', async () => {
    const sandbox = await startSandbox({ scenario: { domains: { 'slow.test': { latencyMs: 400 } } } });
    const ses = sesClient(sandbox.url);

    const fastStart = Date.now();
    await ses.send(simpleEmail('a@fast.test'));
    expect(Date.now() - fastStart).toBeLessThan(300);

    const start = Date.now();
    await ses.send(simpleEmail('a@slow.test'));
    const answeredAt = Date.now();
    expect(answeredAt - start).toBeGreaterThanOrEqual(390);
    const slow = sandbox.accepted().find((m) => m.domain === 'slow.test');
    expect(answeredAt - (slow?.arrivedAt ?? 0)).toBeGreaterThanOrEqual(390);
  });

  it('accepts duplicates, as SES does, and counts them by Message-ID or else sluice_id', async () => {
    const sandbox = await startSandbox();
    const ses = sesClient(sandbox.url);
    await ses.send(simpleEmail('a@example.com', { messageId: '<d1@sluice.test>', sluiceId: 'x' }));
    await ses.send(simpleEmail('a@example.com', { messageId: '<d1@sluice.test>', sluiceId: 'y' }));
    await ses.send(simpleEmail('a@example.com', { messageId: '<d2@sluice.test>', sluiceId: 'x' }));
    await ses.send(simpleEmail('a@example.com', { sluiceId: 's9' }));
    await ses.send(simpleEmail('a@example.com', { sluiceId: 's9' }));
    await ses.send(simpleEmail('a@example.com'));
    await ses.send(simpleEmail('a@example.com'));

    expect(sandbox.stats()).toMatchObject({ accepted: 7, duplicates: 2 });
    expect(new Set(sandbox.accepted().map((m) => m.providerMessageId)).size).toBe(7);
  });

  it('answers invalid requests with BadRequestException', async () => {
    const sandbox = await startSandbox();
    const ses = sesClient(sandbox.url);
    const simple = { Subject: { Data: 's' }, Body: { Text: { Data: 'b' } } };
    const { errors } = await settle([
      ses.send(new SendEmailCommand({ Destination: { ToAddresses: ['a@example.com'] }, Content: { Simple: simple } })),
      ses.send(
        new SendEmailCommand({
          FromEmailAddress: 'f@x.test',
          Destination: { ToAddresses: [] },
          Content: { Simple: simple },
        }),
      ),
      ses.send(
        new SendEmailCommand({
          FromEmailAddress: 'f@x.test',
          Destination: { ToAddresses: ['a@example.com'] },
          Content: {},
        }),
      ),
    ]);
    expect(errors.map((e: SdkError) => [e.name, e.$metadata?.httpStatusCode])).toEqual([
      ['BadRequestException', 400],
      ['BadRequestException', 400],
      ['BadRequestException', 400],
    ]);
    expect(errors[0]?.message).toContain('FromEmailAddress');
    expect(errors[1]?.message).toContain('Destination.ToAddresses');
    expect(errors[2]?.message).toContain('exactly one of Simple, Raw or Template');
    expect(sandbox.stats()).toMatchObject({ accepted: 0, rejected: 0, throttled: 0 });
  });

  it('rejects a foreign access key with UnrecognizedClientException when accessKeyId is set', async () => {
    const sandbox = await startSandbox({ accessKeyId: 'AKIDTEST' });
    await expect(sesClient(sandbox.url, 'AKIDOTHER').send(simpleEmail('a@example.com'))).rejects.toMatchObject({
      name: 'UnrecognizedClientException',
      $metadata: { httpStatusCode: 403 },
    });
    await sesClient(sandbox.url).send(simpleEmail('a@example.com'));
    expect(sandbox.accepted()).toHaveLength(1);
  });
});
