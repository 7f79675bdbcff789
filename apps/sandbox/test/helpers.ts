import { SESv2Client, SendEmailCommand, type SendEmailCommandInput } from '@aws-sdk/client-sesv2';
import { MailService } from '@sendgrid/mail';
import FormData from 'form-data';
import Mailgun from 'mailgun.js';
import { createTransport, type Transporter } from 'nodemailer';
import type SMTPPool from 'nodemailer/lib/smtp-pool/index.js';
import { afterEach } from 'vitest';
import { createSandbox, type Sandbox, type SandboxOptions } from '../src/index.js';

const open: { close(): unknown }[] = [];

// Each test closes what it opened, even when it fails half-way.
afterEach(async () => {
  const closing = open.splice(0).reverse();
  for (const item of closing) await item.close();
});

/** A sandbox closed after the test. */
export async function startSandbox(options: SandboxOptions = {}): Promise<Sandbox> {
  const sandbox = await createSandbox(options);
  open.push(sandbox);
  return sandbox;
}

/** A real SES v2 client pointed at `url`, destroyed after the test. */
export function sesClient(url: string, accessKeyId = 'AKIDTEST'): SESv2Client {
  const client = new SESv2Client({
    region: 'us-east-1',
    endpoint: url,
    credentials: { accessKeyId, secretAccessKey: 'test' },
    maxAttempts: 1,
    requestHandler: { requestTimeout: 5000, connectionTimeout: 2000, throwOnRequestTimeout: true },
  });
  open.push({ close: () => client.destroy() });
  return client;
}

/** A simple message to `to`, with optional Message-ID header and sluice_id tag. */
export function simpleEmail(
  to: string,
  extra: { messageId?: string; sluiceId?: string; subject?: string } = {},
): SendEmailCommand {
  const input: SendEmailCommandInput = {
    FromEmailAddress: 'sender@sluice.test',
    Destination: { ToAddresses: [to] },
    Content: {
      Simple: {
        Subject: { Data: extra.subject ?? 'Hello' },
        Body: { Text: { Data: 'Hello there' } },
        ...(extra.messageId === undefined ? {} : { Headers: [{ Name: 'Message-ID', Value: extra.messageId }] }),
      },
    },
    ...(extra.sluiceId === undefined ? {} : { EmailTags: [{ Name: 'sluice_id', Value: extra.sluiceId }] }),
  };
  return new SendEmailCommand(input);
}

/** What a rejected SDK promise carries, for assertions. */
export interface SdkError {
  name: string;
  message: string;
  $metadata?: { httpStatusCode?: number; requestId?: string };
}

/** Settles every promise and splits fulfilled values from SDK errors. */
export async function settle<T>(promises: Promise<T>[]): Promise<{ ok: T[]; errors: SdkError[] }> {
  const results = await Promise.allSettled(promises);
  const ok: T[] = [];
  const errors: SdkError[] = [];
  for (const r of results) {
    if (r.status === 'fulfilled') ok.push(r.value);
    else errors.push(r.reason as SdkError);
  }
  return { ok, errors };
}

/** A real SendGrid client pointed at the sandbox; the key must be set before the base URL. */
export function sendgridClient(url: string, apiKey = 'SG.test-key', timeoutMs = 5000): MailService {
  const mail = new MailService();
  mail.setApiKey(apiKey);
  // `client` is not in the typings of MailService, though it is how one points it elsewhere.
  (mail as unknown as { client: { setDefaultRequest(key: string, value: string): void } }).client.setDefaultRequest(
    'baseUrl',
    url,
  );
  mail.setTimeout(timeoutMs);
  return mail;
}

/** A real Mailgun client pointed at the sandbox. */
export function mailgunClient(
  url: string,
  key = 'key-test',
  timeout = 5000,
): ReturnType<InstanceType<typeof Mailgun>['client']> {
  return new Mailgun(FormData).client({ username: 'api', key, url, timeout });
}

/** A pooled nodemailer transport to the sandbox's SMTP port, closed after the test. */
export function smtpTransport(
  port: number,
  options: Partial<SMTPPool.Options> = {},
): Transporter<SMTPPool.SentMessageInfo, SMTPPool.Options> {
  const transport = createTransport({
    host: '127.0.0.1',
    port,
    secure: false,
    ignoreTLS: true,
    pool: true,
    maxConnections: 1,
    ...options,
  });
  open.push({ close: () => transport.close() });
  return transport;
}

/** What a rejected nodemailer promise carries, for assertions. */
export interface SmtpError {
  code?: string;
  command?: string;
  responseCode?: number;
  response?: string;
  message: string;
}
