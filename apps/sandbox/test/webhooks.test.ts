import { createServer, type IncomingHttpHeaders } from 'node:http';
import { request } from 'node:https';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import {
  normalizeMailgunEvent,
  normalizeSendgridEvents,
  normalizeSesEvent,
  parseMailgunSignature,
  verifyMailgunSignature,
  verifySendgridSignature,
  verifySnsMessage,
  type DeliveryEvent,
} from '@sluice/events';
import type { Sandbox } from '../src/index.js';
import { mailgunClient, sendgridClient, sesClient, simpleEmail, smtpTransport, startSandbox } from './helpers.js';

const TOPIC = 'arn:aws:sns:us-east-1:123456789012:sandbox-events';

const catchers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of catchers.splice(0)) await close();
});

interface Captured {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

/** A webhook receiver that keeps what it is sent, closed after the test. */
async function startCatcher(
  status: number | ((request: Captured, all: Captured[]) => number) = 200,
): Promise<{ url: string; requests: Captured[]; close(): Promise<void> }> {
  const requests: Captured[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const captured = { path: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') };
      requests.push(captured);
      res.writeHead(typeof status === 'number' ? status : status(captured, requests)).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const close = () => new Promise<void>((resolve) => server.close(() => resolve()));
  catchers.push(close);
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests, close };
}

/** An https GET trusting the sandbox's own certificate, as SNS's certificate fetch would. */
function fetchPem(url: string, ca: string): Promise<string> {
  return new Promise((resolve, reject) => {
    request(url, { ca }, (res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString()));
      res.on('end', () => resolve(text));
    })
      .on('error', reject)
      .end();
  });
}

async function waitForCount(requests: unknown[], n: number, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (requests.length < n) {
    if (Date.now() > deadline) throw new Error(`only ${requests.length} of ${n} webhook requests arrived`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Verifies one captured request as the api would and normalises it. */
async function verified(sandbox: Sandbox, captured: Captured): Promise<DeliveryEvent[]> {
  const keys = sandbox.webhookKeys();
  if (captured.path === '/ses') {
    const result = await verifySnsMessage(captured.body, {
      topicArns: [TOPIC],
      certHost: /^127\.0\.0\.1$/,
      fetchCertificate: (url) => fetchPem(url, keys.snsCertificate!),
    });
    if (!result.ok) throw new Error(`SNS: ${result.message}`);
    expect(captured.headers['x-amz-sns-message-type']).toBe('Notification');
    const events = normalizeSesEvent(result.value.Message, result.value.MessageId);
    if (!events.ok) throw new Error(`SES: ${events.message}`);
    return events.value;
  }
  if (captured.path === '/sendgrid') {
    const result = verifySendgridSignature(
      captured.body,
      captured.headers['x-twilio-email-event-webhook-signature'] as string,
      captured.headers['x-twilio-email-event-webhook-timestamp'] as string,
      keys.sendgridPublicKey,
    );
    if (!result.ok) throw new Error(`SendGrid: ${result.message}`);
    const events = normalizeSendgridEvents(JSON.parse(captured.body));
    if (!events.ok) throw new Error(`SendGrid: ${events.message}`);
    return events.value;
  }
  const body: unknown = JSON.parse(captured.body);
  const signature = parseMailgunSignature(body);
  if (!signature.ok) throw new Error(`Mailgun: ${signature.message}`);
  const result = verifyMailgunSignature(signature.value, keys.mailgunSigningKey);
  if (!result.ok) throw new Error(`Mailgun: ${result.message}`);
  const event = normalizeMailgunEvent(body);
  if (!event.ok) throw new Error(`Mailgun: ${event.message}`);
  return event.value ? [event.value] : [];
}

function scenario(url: string, domains: Record<string, unknown>, extra: Record<string, unknown> = {}) {
  return {
    domains,
    webhooks: {
      ses: { url: `${url}/ses`, topicArn: TOPIC },
      sendgrid: { url: `${url}/sendgrid` },
      mailgun: { url: `${url}/mailgun` },
      reportDelayMs: 10,
      ...extra,
    },
  };
}

describe('webhook reports', () => {
  it('reports bounces and complaints through each ESP, signed as that ESP signs', async () => {
    const catcher = await startCatcher();
    const sandbox = await startSandbox({
      scenario: scenario(catcher.url, { 'gone.test': { bounceRate: 1 }, 'angry.test': { complaintRate: 1 } }),
    });
    const ses = sesClient(sandbox.url);
    const sendgrid = sendgridClient(sandbox.url);
    const mailgun = mailgunClient(sandbox.url);
    for (const domain of ['gone.test', 'angry.test']) {
      const tag = domain.split('.')[0]!;
      await ses.send(simpleEmail(`u@${domain}`, { sluiceId: `ses-${tag}` }));
      await sendgrid.send({
        to: `u@${domain}`,
        from: 'sender@sluice.test',
        subject: 'hi',
        text: 'hello',
        customArgs: { sluice_id: `sg-${tag}`, sluice_tenant: 'acme' },
      });
      await mailgun.messages.create('mg.sluice.test', {
        to: `u@${domain}`,
        from: 'sender@sluice.test',
        subject: 'hi',
        text: 'hello',
        'v:sluice_id': `mg-${tag}`,
        'v:sluice_campaign': 'spring',
      });
    }
    // Accepted but not bounced or complained about: no report without reportDeliveries.
    await ses.send(simpleEmail('u@fine.test', { sluiceId: 'ses-fine' }));
    await waitForCount(catcher.requests, 6);

    const events = (await Promise.all(catcher.requests.map((r) => verified(sandbox, r)))).flat();
    const byId = Object.fromEntries(events.map((e) => [e.messageId, e]));
    expect(Object.keys(byId).sort()).toEqual(['mg-angry', 'mg-gone', 'ses-angry', 'ses-gone', 'sg-angry', 'sg-gone']);
    for (const esp of ['ses', 'sg', 'mg']) {
      expect(byId[`${esp}-gone`]).toMatchObject({ kind: 'bounced_hard', recipient: 'u@gone.test', enhanced: '5.1.1' });
      expect(byId[`${esp}-angry`]).toMatchObject({ kind: 'complained', recipient: 'u@angry.test' });
    }
    expect(byId['sg-gone']).toMatchObject({ provider: 'sendgrid', tenantId: 'acme' });
    expect(byId['mg-gone']).toMatchObject({ provider: 'mailgun', campaignId: 'spring' });
    // The ESP's own id of the accepted message comes back, as the real ones do.
    const accepted = Object.fromEntries(sandbox.accepted().map((a) => [a.sluiceId, a.providerMessageId]));
    expect(byId['ses-gone']!.providerMessageId).toBe(accepted['ses-gone']);
    expect(byId['mg-gone']!.providerMessageId).toBe(accepted['mg-gone']!.slice(1, -1));
    // Counted once each answer is back, a moment after the catcher saw the request.
    await expect.poll(() => sandbox.stats().webhooksSent).toBe(6);
    expect(sandbox.stats().webhooksFailed).toBe(0);

    // The published keys match what the HTTP endpoints give another process.
    const keys = (await (await fetch(`${sandbox.url}/_sandbox/webhook-keys`)).json()) as Record<string, string>;
    expect(keys).toEqual(sandbox.webhookKeys());
    expect(await (await fetch(`${sandbox.url}/_sandbox/sns/cert.pem`)).text()).toBe(keys.snsCertificate);
  });

  it('bounces a deterministic share of messages, the same on every run', async () => {
    const runs: string[][] = [];
    for (let run = 0; run < 2; run++) {
      const catcher = await startCatcher();
      const sandbox = await startSandbox({ scenario: scenario(catcher.url, { 'some.test': { bounceRate: 0.3 } }) });
      const sendgrid = sendgridClient(sandbox.url);
      await Promise.all(
        Array.from({ length: 100 }, (_, i) =>
          sendgrid.send({
            to: `u${i}@some.test`,
            from: 'sender@sluice.test',
            subject: 'hi',
            text: 'hello',
            customArgs: { sluice_id: `m${i}` },
          }),
        ),
      );
      await new Promise((r) => setTimeout(r, 300));
      const events = (await Promise.all(catcher.requests.map((r) => verified(sandbox, r)))).flat();
      expect(events.every((e) => e.kind === 'bounced_hard')).toBe(true);
      runs.push(events.map((e) => e.messageId!).sort());
    }
    expect(runs[0]!.length).toBeGreaterThanOrEqual(20);
    expect(runs[0]!.length).toBeLessThanOrEqual(40);
    expect(runs[1]).toEqual(runs[0]);
  });

  it('reports deliveries only when asked; a refused report is counted, never thrown', async () => {
    const catcher = await startCatcher(500);
    const sandbox = await startSandbox({ scenario: scenario(catcher.url, {}, { reportDeliveries: true }) });
    await sesClient(sandbox.url).send(simpleEmail('u@fine.test', { sluiceId: 'ses-fine' }));
    await waitForCount(catcher.requests, 1);
    expect(await verified(sandbox, catcher.requests[0]!)).toMatchObject([{ kind: 'delivered', messageId: 'ses-fine' }]);
    await expect.poll(() => sandbox.stats().webhooksFailed).toBe(1);
    expect(sandbox.stats().webhooksSent).toBe(0);
  });

  it('redelivers the same signed request until answered 2xx, as the ESPs do; Mailgun gives up on a 406', async () => {
    // Each path refuses its first post: SNS and SendGrid post it again; Mailgun's 406 is final.
    const catcher = await startCatcher((req, all) =>
      all.filter((r) => r.path === req.path).length > 1 ? 200 : req.path === '/mailgun' ? 406 : 503,
    );
    const sandbox = await startSandbox({
      scenario: scenario(catcher.url, { 'gone.test': { bounceRate: 1 } }, { redeliverMs: 20 }),
    });
    await sesClient(sandbox.url).send(simpleEmail('u@gone.test', { sluiceId: 'ses-gone' }));
    await sendgridClient(sandbox.url).send({
      to: 'u@gone.test',
      from: 'sender@sluice.test',
      subject: 'hi',
      text: 'hello',
      customArgs: { sluice_id: 'sg-gone' },
    });
    await mailgunClient(sandbox.url).messages.create('mg.sluice.test', {
      to: 'u@gone.test',
      from: 'sender@sluice.test',
      subject: 'hi',
      text: 'hello',
      'v:sluice_id': 'mg-gone',
    });
    await expect.poll(() => sandbox.webhookReports().filter((r) => r.answered || r.abandoned).length).toBe(3);
    const byProtocol = Object.fromEntries(sandbox.webhookReports().map((r) => [r.protocol, r]));
    expect(byProtocol.ses).toMatchObject({ kind: 'bounce', sluiceId: 'ses-gone', posts: 2, answered: true });
    expect(byProtocol.sendgrid).toMatchObject({ posts: 2, answered: true });
    expect(byProtocol.mailgun).toMatchObject({ posts: 1, answered: false, abandoned: true });
    // The same request again: SNS's MessageId and signature, SendGrid's event id, byte for byte.
    for (const path of ['/ses', '/sendgrid']) {
      const posts = catcher.requests.filter((r) => r.path === path);
      expect(posts).toHaveLength(2);
      expect(posts[1]!.body).toBe(posts[0]!.body);
    }
    expect(sandbox.stats()).toMatchObject({ webhooksSent: 2, webhooksFailed: 3, webhooksRedelivered: 2 });
  });

  it('close() cancels reports not yet posted', async () => {
    const catcher = await startCatcher();
    const sandbox = await startSandbox({
      scenario: scenario(catcher.url, { 'gone.test': { bounceRate: 1 } }, { reportDelayMs: 200 }),
    });
    await sesClient(sandbox.url).send(simpleEmail('u@gone.test', { sluiceId: 'late' }));
    await sandbox.close();
    await new Promise((r) => setTimeout(r, 300));
    expect(catcher.requests).toEqual([]);
  });

  it('reports nothing for SMTP, which has no webhooks', async () => {
    const catcher = await startCatcher();
    const sandbox = await startSandbox({ scenario: scenario(catcher.url, { 'gone.test': { bounceRate: 1 } }) });
    await smtpTransport(sandbox.smtpPort).sendMail({ from: 's@sluice.test', to: 'u@gone.test', text: 'hi' });
    await new Promise((r) => setTimeout(r, 100));
    expect(catcher.requests).toEqual([]);
    expect(sandbox.stats().accepted).toBe(1);
  });
});
