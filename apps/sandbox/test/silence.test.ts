import { describe, expect, it } from 'vitest';
import { sendgridClient, sesClient, simpleEmail, smtpTransport, startSandbox, type SmtpError } from './helpers.js';

const mail = (to: string, id: string) => ({
  from: 'a@sluice.test',
  to,
  subject: 'hi',
  text: 'hello',
  messageId: `<${id}@sluice.test>`,
});

describe('silence: the ESP stops answering', () => {
  it('reads HTTP sends in full and never answers; the message is delivered unless deliver is false', async () => {
    const sandbox = await startSandbox({ scenario: { silence: { http: ['ses', 'sendgrid'] } } });
    const started = Date.now();
    const ses = sesClient(sandbox.url);
    await expect(ses.send(simpleEmail('u@example.com', { sluiceId: 'ses-1' }))).rejects.toMatchObject({
      name: 'TimeoutError',
    });
    expect(Date.now() - started).toBeGreaterThanOrEqual(4_000);
    await expect(
      sendgridClient(sandbox.url, 'SG.k', 500).send({
        to: 'u@example.com',
        from: 'a@sluice.test',
        subject: 's',
        text: 't',
      }),
    ).rejects.toThrow(/timeout/i);
    // Both arrived in full, as if delivered: a resend of either is a duplicate.
    expect(sandbox.accepted().map((a) => a.protocol)).toEqual(['ses', 'sendgrid']);

    sandbox.setScenario({ silence: { http: ['ses'], deliver: false } });
    await expect(ses.send(simpleEmail('v@example.com'))).rejects.toMatchObject({ name: 'TimeoutError' });
    expect(sandbox.accepted()).toHaveLength(2);
    // Answering again: a new scenario without it.
    sandbox.setScenario({});
    await expect(ses.send(simpleEmail('w@example.com'))).resolves.toHaveProperty('MessageId');
  }, 20_000);

  it('SMTP: silent before DATA (no greeting, no answer to MAIL FROM: nothing sent) or after it (delivered)', async () => {
    const sandbox = await startSandbox({ scenario: { silence: { smtp: 'before-data' } } });
    const quiet = smtpTransport(sandbox.smtpPort, { greetingTimeout: 300, socketTimeout: 1_000 });
    const greeting = (await quiet.sendMail(mail('u@example.com', 'g1')).catch((e: unknown) => e)) as SmtpError;
    expect(greeting.code).toBe('ETIMEDOUT');
    // A connection greeted before the silence meets it at MAIL FROM.
    sandbox.setScenario({});
    const open = smtpTransport(sandbox.smtpPort, { socketTimeout: 500 });
    await open.sendMail(mail('u@example.com', 'm0'));
    sandbox.setScenario({ silence: { smtp: 'before-data' } });
    const atMailFrom = (await open.sendMail(mail('u@example.com', 'm1')).catch((e: unknown) => e)) as SmtpError;
    expect(atMailFrom.code).toBe('ETIMEDOUT');
    expect(sandbox.accepted().map((a) => a.messageId)).toEqual(['<m0@sluice.test>']);

    sandbox.setScenario({ silence: { smtp: 'after-data' } });
    const data = smtpTransport(sandbox.smtpPort, { socketTimeout: 500 });
    const lost = (await data.sendMail(mail('u@example.com', 'd1')).catch((e: unknown) => e)) as SmtpError;
    expect(lost.code).toBe('ETIMEDOUT');
    expect(sandbox.accepted().map((a) => a.messageId)).toEqual(['<m0@sluice.test>', '<d1@sluice.test>']);

    sandbox.setScenario({});
    const again = smtpTransport(sandbox.smtpPort);
    expect((await again.sendMail(mail('u@example.com', 'd1'))).response).toMatch(/^250/);
    expect(sandbox.stats().duplicates).toBe(1);
  }, 20_000);
});
