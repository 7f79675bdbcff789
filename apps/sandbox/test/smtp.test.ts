import { describe, expect, it } from 'vitest';
import { sesClient, simpleEmail, smtpTransport, startSandbox, type SmtpError } from './helpers.js';

const FROM = 'sender@sluice.test';

function mail(to: string, extra: { messageId?: string; subject?: string } = {}) {
  return { from: FROM, to, subject: extra.subject ?? 'Hello', text: 'Hello there', messageId: extra.messageId };
}

/** The rejection of `promise`, which must reject. */
async function failure(promise: Promise<unknown>): Promise<SmtpError> {
  try {
    await promise;
  } catch (error) {
    return error as SmtpError;
  }
  throw new Error('expected the send to fail');
}

describe('SMTP', () => {
  it('accepts a message, records it with its Message-ID and answers 250 with a queue id', async () => {
    const sandbox = await startSandbox();
    const smtp = smtpTransport(sandbox.smtpPort);
    const info = await smtp.sendMail(mail('Bob <Bob@Example.com>', { messageId: '<s1@sluice.test>', subject: 'Hi' }));

    expect(info.response).toMatch(/^250 2\.0\.0 OK queued as [0-9A-F]{10}$/);
    expect(info.accepted).toEqual(['Bob@example.com']);
    expect(sandbox.accepted()).toEqual([
      {
        protocol: 'smtp',
        providerMessageId: info.response.slice(-10),
        messageId: '<s1@sluice.test>',
        sluiceId: undefined,
        from: FROM,
        to: ['Bob@example.com'],
        subject: 'Hi',
        domain: 'example.com',
        arrivedAt: expect.any(Number) as number,
        tags: {},
      },
    ]);
  });

  it('refuses at RCPT with real receivers’ replies: bounce, block, defer, fail', async () => {
    const sandbox = await startSandbox({
      scenario: {
        domains: {
          'example.com': {
            bounce: ['gone@example.com'],
            block: ['blocked-*@example.com'],
            defer: ['full@example.com'],
            fail: ['broken@example.com'],
          },
        },
      },
    });
    const smtp = smtpTransport(sandbox.smtpPort);
    const refusals = [];
    for (const to of ['gone@example.com', 'blocked-1@example.com', 'full@example.com', 'broken@example.com']) {
      refusals.push(await failure(smtp.sendMail(mail(to))));
    }
    expect(refusals.map((e) => [e.code, e.command, e.responseCode])).toEqual([
      ['EENVELOPE', 'RCPT TO', 550],
      ['EENVELOPE', 'RCPT TO', 550],
      ['EENVELOPE', 'RCPT TO', 452],
      ['EENVELOPE', 'RCPT TO', 451],
    ]);
    expect(refusals[0]?.response).toMatch(/^550 5\.1\.1 The email account that you tried to reach does not exist\./);
    expect(refusals[1]?.response).toMatch(/^550 5\.7\.1 Unfortunately, messages from \[127\.0\.0\.1\] weren't sent\./);
    expect(refusals[1]?.response).toContain('block list (S3140)');
    expect(refusals[2]?.response).toMatch(/^452 4\.2\.2 The email account that you tried to reach is over quota\./);
    expect(refusals[3]?.response).toBe('451 4.3.0 Temporary system problem. Try again later.');
    expect(sandbox.accepted()).toEqual([]);
    expect(sandbox.stats()).toMatchObject({ accepted: 0, rejected: 2, deferred: 2, throttled: 0, dropped: 0 });

    // The pooled connection survived the refusals.
    await smtp.sendMail(mail('fine@example.com'));
    expect(sandbox.accepted()).toHaveLength(1);
  });

  it('greylists the first attempt of each sender/recipient pair, then accepts it', async () => {
    const sandbox = await startSandbox({ scenario: { domains: { 'grey.test': { greylist: true } } } });
    const smtp = smtpTransport(sandbox.smtpPort);

    const first = await failure(smtp.sendMail(mail('a@grey.test')));
    expect(first).toMatchObject({ code: 'EENVELOPE', responseCode: 451 });
    expect(first.response).toBe('451 4.7.1 Greylisted, please try again later');
    await smtp.sendMail(mail('a@grey.test'));
    await smtp.sendMail(mail('a@grey.test'));
    // Another pair is greylisted on its own; other domains are not greylisted at all.
    await expect(smtp.sendMail(mail('b@grey.test'))).rejects.toMatchObject({ responseCode: 451 });
    await smtp.sendMail(mail('a@other.test'));
    expect(sandbox.stats()).toMatchObject({ accepted: 3, deferred: 2 });

    sandbox.reset();
    await expect(smtp.sendMail(mail('a@grey.test'))).rejects.toMatchObject({ responseCode: 451 });
  });

  it('throttles above the rate with Gmail’s 421 4.7.28, closing the connection', async () => {
    const sandbox = await startSandbox({ scenario: { domains: { 'busy.test': { rate: 0.001, burst: 1 } } } });
    const smtp = smtpTransport(sandbox.smtpPort);
    await smtp.sendMail(mail('a@busy.test'));
    const throttled = await failure(smtp.sendMail(mail('b@busy.test')));
    expect(throttled).toMatchObject({ code: 'ECONNECTION', command: 'CONN', responseCode: 421 });
    expect(throttled.response).toMatch(/^421 4\.7\.28 \[127\.0\.0\.1\] Our system has detected an unusual rate/);

    // The pool reconnects; other domains are not limited.
    await smtp.sendMail(mail('c@idle.test'));
    const { byDomain } = sandbox.stats();
    expect(byDomain).toMatchObject({ 'busy.test': { accepted: 1 }, 'idle.test': { accepted: 1, throttled: 0 } });
    // nodemailer's pool may requeue a message whose connection closed (it races the 421's
    // error against the close), so the sandbox can see the refused message twice.
    expect(byDomain['busy.test']?.throttled).toBeGreaterThanOrEqual(1);
  });

  it('uses the domain’s throttleReply, and shares the rate bucket with the HTTP ESPs', async () => {
    const throttleReply =
      '450-4.2.1 The user you are trying to contact is receiving mail at a rate that prevents additional messages from being delivered.';
    const sandbox = await startSandbox({
      scenario: { domains: { 'busy.test': { rate: 0.001, burst: 1, throttleReply } } },
    });
    await sesClient(sandbox.url).send(simpleEmail('a@busy.test'));
    const throttled = await failure(smtpTransport(sandbox.smtpPort).sendMail(mail('b@busy.test')));
    expect(throttled).toMatchObject({ code: 'EENVELOPE', responseCode: 450 });
    expect(throttled.response).toBe(`450 ${throttleReply.slice(4)}`);
  });

  it('drops the connection at RCPT for dropBeforeData: nothing delivered', async () => {
    const sandbox = await startSandbox({ scenario: { default: { dropBeforeData: ['void@example.com'] } } });
    const smtp = smtpTransport(sandbox.smtpPort);
    const dropped = await failure(smtp.sendMail(mail('void@example.com')));
    expect(dropped.code).toBe('ECONNECTION');
    expect(dropped.responseCode).toBeUndefined();
    expect(sandbox.accepted()).toEqual([]);
    expect(sandbox.stats()).toMatchObject({ accepted: 0, dropped: 1 });
  });

  it('drops the connection after DATA for dropAfterData: delivered, unanswered, a resend is a duplicate', async () => {
    const sandbox = await startSandbox({ scenario: { default: { dropAfterData: ['lost@example.com'] } } });
    const smtp = smtpTransport(sandbox.smtpPort);
    const dropped = await failure(smtp.sendMail(mail('lost@example.com', { messageId: '<d1@sluice.test>' })));
    expect(dropped).toMatchObject({ code: 'ECONNECTION', command: 'CONN' });
    expect(dropped.responseCode).toBeUndefined();
    expect(sandbox.accepted()).toMatchObject([{ protocol: 'smtp', messageId: '<d1@sluice.test>' }]);

    sandbox.setScenario({});
    await smtp.sendMail(mail('lost@example.com', { messageId: '<d1@sluice.test>' }));
    expect(sandbox.stats()).toMatchObject({ accepted: 2, dropped: 1, duplicates: 1 });
  });

  it('answers DATA after the latency: a client with a shorter timeout times out after submitting', async () => {
    const sandbox = await startSandbox({ scenario: { domains: { 'slow.test': { latencyMs: 600 } } } });
    const smtp = smtpTransport(sandbox.smtpPort, { socketTimeout: 150 });
    const start = Date.now();
    const timedOut = await failure(smtp.sendMail(mail('a@slow.test', { messageId: '<t1@sluice.test>' })));
    expect(timedOut.code).toBe('ETIMEDOUT');
    expect(Date.now() - start).toBeLessThan(550);
    expect(sandbox.accepted()).toMatchObject([{ messageId: '<t1@sluice.test>', domain: 'slow.test' }]);

    const patient = smtpTransport(sandbox.smtpPort);
    const before = Date.now();
    await patient.sendMail(mail('b@slow.test'));
    expect(Date.now() - before).toBeGreaterThanOrEqual(590);
  });

  it('requires AUTH when smtpUser is set: 530 without, 535 5.7.8 with a wrong password', async () => {
    const sandbox = await startSandbox({ smtpUser: 'sluice', smtpPassword: 'secret' });
    const anonymous = await failure(smtpTransport(sandbox.smtpPort).sendMail(mail('a@example.com')));
    expect(anonymous.responseCode).toBe(530);
    const wrong = await failure(
      smtpTransport(sandbox.smtpPort, { auth: { user: 'sluice', pass: 'nope' } }).sendMail(mail('a@example.com')),
    );
    expect(wrong).toMatchObject({ code: 'EAUTH', responseCode: 535 });
    expect(wrong.response).toMatch(/^535 5\.7\.8 /);

    await smtpTransport(sandbox.smtpPort, { auth: { user: 'sluice', pass: 'secret' } }).sendMail(mail('a@example.com'));
    expect(sandbox.accepted()).toHaveLength(1);
  });

  it('decides per recipient: one refused RCPT does not stop the others', async () => {
    const sandbox = await startSandbox({ scenario: { domains: { 'example.com': { bounce: ['gone@example.com'] } } } });
    const info = await smtpTransport(sandbox.smtpPort).sendMail({
      ...mail('gone@example.com'),
      to: ['gone@example.com', 'here@example.org'],
    });
    expect(info.accepted).toEqual(['here@example.org']);
    expect(info.rejected).toEqual(['gone@example.com']);
    expect(sandbox.accepted()).toMatchObject([{ to: ['here@example.org'], domain: 'example.org' }]);
    expect(sandbox.stats()).toMatchObject({ accepted: 1, rejected: 1 });
  });

  it('close() ends idle pooled connections and parked DATA answers at once', async () => {
    const sandbox = await startSandbox({ scenario: { domains: { 'slow.test': { latencyMs: 60_000 } } } });
    const smtp = smtpTransport(sandbox.smtpPort);
    await smtp.sendMail(mail('a@example.com'));
    const parked = failure(smtpTransport(sandbox.smtpPort).sendMail(mail('a@slow.test')));
    await expect.poll(() => sandbox.accepted().length).toBe(2);

    const start = Date.now();
    await sandbox.close();
    expect(Date.now() - start).toBeLessThan(1000);
    // The parked answer is released by close() rather than sent after a minute.
    expect(await Promise.race([parked.then(() => 'settled'), new Promise((r) => setTimeout(r, 1000, 'hung'))])).toBe(
      'settled',
    );
  });
});
