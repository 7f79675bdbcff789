import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterEach } from 'vitest';
import { parseConfig, type ProviderConfig, type QueuedMessage } from '@sluice/core';
import { createSandbox, type Sandbox, type SandboxOptions } from '@sluice/sandbox';
import {
  createMailgunProvider,
  createSendgridProvider,
  createSesProvider,
  createSmtpProvider,
  messageIdHeader,
  type BatchEntry,
  type Outcome,
  type Provider,
} from '../src/index.js';

const open: { close(): unknown }[] = [];

// Each test closes what it opened, even when it fails half-way: adapters before sandboxes.
afterEach(async () => {
  const closing = open.splice(0).reverse();
  for (const item of closing) await item.close();
});

/** Closes `item` after the test. */
export function track<T extends { close(): unknown }>(item: T): T {
  open.push(item);
  return item;
}

/** A sandbox closed after the test. */
export async function startSandbox(options: SandboxOptions = {}): Promise<Sandbox> {
  const sandbox = await createSandbox(options);
  open.push(sandbox);
  return sandbox;
}

/** A local port nothing listens on. */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

export type Kind = ProviderConfig['kind'];

/** The Mailgun sending domain of every test adapter. */
export const MAILGUN_DOMAIN = 'mg.sluice.test';

/** Fields that make a provider a real one: where it sends, and its keys. */
const REAL_FIELDS = ['endpoint', 'host', 'apiKey', 'accessKeyId'];

/**
 * An adapter of `kind` pointed at `sandbox`, closed after the test. `extra` is merged into
 * its provider config (validated as a real config would be); without an address or keys of
 * its own it is a `sandbox: true` provider.
 */
export function adapter(
  kind: Kind,
  sandbox: Pick<Sandbox, 'url' | 'smtpPort'>,
  extra: Record<string, unknown> = {},
): Provider {
  const config = parseConfig({
    defaultProvider: 'p',
    providers: {
      p: {
        kind,
        rate: 100,
        ...(REAL_FIELDS.some((field) => field in extra) ? {} : { sandbox: true }),
        ...(kind === 'mailgun' ? { domain: MAILGUN_DOMAIN } : {}),
        ...extra,
      },
    },
  });
  const options = { id: 'p', sandbox: { url: sandbox.url, smtpHost: '127.0.0.1', smtpPort: sandbox.smtpPort } };
  const p = config.providers.p!;
  let provider: Provider;
  switch (p.kind) {
    case 'ses':
      provider = createSesProvider({ ...options, config: p });
      break;
    case 'sendgrid':
      provider = createSendgridProvider({ ...options, config: p });
      break;
    case 'mailgun':
      provider = createMailgunProvider({ ...options, config: p });
      break;
    case 'smtp':
      provider = createSmtpProvider({ ...options, config: p });
      break;
  }
  open.push(provider);
  return provider;
}

let counter = 0;

/** A queued message to `to`, with a fresh id. */
export function message(to: string, extra: Partial<QueuedMessage> = {}): QueuedMessage {
  counter += 1;
  return {
    id: `m${process.pid}-${Date.now().toString(36)}-${counter}`,
    acceptedAt: Date.now(),
    from: { address: 'sender@sluice.test', name: 'Sluice Test' },
    to,
    subject: 'Hello',
    text: 'Hello there',
    html: '<p>Hello there</p>',
    priority: 'normal',
    stream: 'transactional',
    tenantId: 'acme',
    campaignId: 'spring',
    tags: { flavour: 'plain' },
    headers: { 'X-Entity-Ref': 'ref-1' },
    ...extra,
  };
}

/** What one send led to, and how often the adapter asked its gate before the final bytes. */
export interface Sent {
  outcome: Outcome;
  submitted: number;
  messageId: string;
}

/**
 * Sends `m` with its stable Message-ID, counting the calls of its gate (`beforeSubmit`);
 * `gate` is what the gate does (by default: lets the final bytes go at once).
 */
export async function send(
  provider: Provider,
  m: QueuedMessage,
  gate: () => Promise<void> = () => Promise.resolve(),
): Promise<Sent> {
  let submitted = 0;
  const messageId = messageIdHeader(m);
  const beforeSubmit = (): Promise<void> => {
    submitted += 1;
    return gate();
  };
  const outcome = await provider.send(m, { messageIdHeader: messageId, beforeSubmit });
  return { outcome, submitted, messageId };
}

/**
 * Sends `entries` as one batch call of `provider` (its `batch`), counting how often the gate
 * before the request's final bytes was asked; `gate` is what that gate does.
 */
export async function sendBatch(
  provider: Provider,
  entries: BatchEntry[],
  gate: () => Promise<void> = () => Promise.resolve(),
  batchId = 'b-1',
): Promise<{ outcomes: Outcome[]; gated: number }> {
  let gated = 0;
  const outcomes = await provider.batch!.send(entries, {
    batchId,
    beforeSubmit: () => {
      gated += 1;
      return gate();
    },
  });
  return { outcomes, gated };
}

/** The kinds of a batch's outcomes, in order. */
export const kinds = (outcomes: Outcome[]): string[] => outcomes.map((o) => o.kind);

/** What the sandbox accepted, by recipient (its first To). */
export const byRecipient = (sandbox: Sandbox) => new Map(sandbox.accepted().map((a) => [a.to[0], a]));
