import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import type { Sandbox } from '@sluice/sandbox';
import type { Outcome } from '../src/index.js';
import { adapter, closedPort, message, send, startSandbox, track, type Kind } from './support.js';

const KINDS: Kind[] = ['ses', 'sendgrid', 'mailgun', 'smtp'];
const HTTP = (kind: Kind): boolean => kind !== 'smtp';

/** The sandbox's records of one Message-ID. */
function recorded(sandbox: Sandbox, messageId: string) {
  return sandbox.accepted().filter((m) => m.messageId === messageId);
}

function expectKind<K extends Outcome['kind']>(outcome: Outcome, kind: K): Extract<Outcome, { kind: K }> {
  expect(outcome, JSON.stringify(outcome)).toMatchObject({ kind });
  return outcome as Extract<Outcome, { kind: K }>;
}

const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** A gate the test opens: `asked` once the adapter waits at it, `open()` lets the final bytes go. */
function opening(): { wait: () => Promise<void>; asked: Promise<void>; open: () => void } {
  let asked!: () => void;
  let open!: () => void;
  const askedP = new Promise<void>((resolve) => (asked = resolve));
  const opened = new Promise<void>((resolve) => (open = resolve));
  return {
    wait: () => {
      asked();
      return opened;
    },
    asked: askedP,
    open,
  };
}

/** A sandbox address nothing listens on, for "connection refused". */
async function deadEnd(): Promise<{ url: string; smtpPort: number }> {
  const port = await closedPort();
  return { url: `http://127.0.0.1:${port}`, smtpPort: port };
}

describe.each(KINDS)('%s adapter against the sandbox', (kind) => {
  it('accepted: one message with our Message-ID, recipient and sluice id', async () => {
    const sandbox = await startSandbox();
    const provider = adapter(kind, sandbox);
    expect(provider.sandbox).toBe(true);
    const m = message('ok@accept.test');
    const { outcome, submitted, messageId } = await send(provider, m);
    const accepted = expectKind(outcome, 'accepted');
    expect(accepted.providerMessageId).not.toBe('');
    expect(submitted).toBe(1);
    const records = recorded(sandbox, messageId);
    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({ protocol: kind, to: ['ok@accept.test'], sluiceId: m.id, subject: 'Hello' });
    expect(sandbox.stats().duplicates).toBe(0);
  });

  it('throttled: the second send over the rate, scoped to whoever refused', async () => {
    const sandbox = await startSandbox({ scenario: { domains: { 'slow.test': { rate: 0.001, burst: 1 } } } });
    const provider = adapter(kind, sandbox);
    expectKind((await send(provider, message('a@slow.test'))).outcome, 'accepted');
    const { outcome } = await send(provider, message('b@slow.test'));
    const throttled = expectKind(outcome, 'throttled');
    expect(throttled.family).toBe('throttled');
    // HTTP 429 lowers the provider's rate; an SMTP 421 4.7.28 the receiving domain's.
    expect(throttled.scope).toBe(HTTP(kind) ? 'provider' : 'receiver');
    if (kind === 'sendgrid' || kind === 'mailgun') {
      // X-RateLimit-Reset (SendGrid) and Retry-After (Mailgun, read off the response): about 1000 s.
      expect(throttled.retryAfterMs).toBeGreaterThan(60_000);
    }
    expect(sandbox.accepted().map((r) => r.to[0])).toEqual(['a@slow.test']);
    // The receiver saw one refusal for our one attempt: no hidden second try (for SMTP, on
    // a fresh connection right after the 421 of the reused one).
    expect(sandbox.stats().byDomain['slow.test']).toMatchObject({ accepted: 1, throttled: 1 });
  });

  it('deferred: a transient failure is deferred transient_system', async () => {
    const sandbox = await startSandbox({ scenario: { default: { fail: ['*@flaky.test'] } } });
    const provider = adapter(kind, sandbox);
    const deferred = expectKind((await send(provider, message('x@flaky.test'))).outcome, 'deferred');
    expect(deferred.family).toBe('transient_system');
    expect(deferred.reply).toMatch(HTTP(kind) ? /HTTP 500/ : /451/);
    expect(sandbox.accepted()).toHaveLength(0);
  });

  it('rejected: a hard bounce is bad_recipient and suppresses the address', async () => {
    const sandbox = await startSandbox({ scenario: { default: { bounce: ['gone@*'] } } });
    const provider = adapter(kind, sandbox);
    const rejected = expectKind((await send(provider, message('gone@bounce.test'))).outcome, 'rejected');
    expect(rejected).toMatchObject({ family: 'bad_recipient', suppress: true });
    expect(sandbox.accepted()).toHaveLength(0);
  });

  it('timeout after the request went out: ambiguous, and the sandbox has it', async () => {
    const sandbox = await startSandbox({ scenario: { default: { latencyMs: 1500 } } });
    const provider = adapter(kind, sandbox, { timeoutMs: 300 });
    const { outcome, submitted, messageId } = await send(provider, message('slow@latency.test'));
    expectKind(outcome, 'ambiguous');
    expect(submitted).toBe(1);
    expect(recorded(sandbox, messageId)).toHaveLength(1);
  });

  it('connection lost after submit: ambiguous, never accepted nor resent', async () => {
    const sandbox = await startSandbox({ scenario: { default: { dropAfterData: ['lost@*'] } } });
    const provider = adapter(kind, sandbox);
    const { outcome, submitted, messageId } = await send(provider, message('lost@drop.test'));
    expectKind(outcome, 'ambiguous');
    expect(submitted).toBe(1);
    expect(recorded(sandbox, messageId)).toHaveLength(1);
    expect(sandbox.stats()).toMatchObject({ dropped: 1, duplicates: 0 });
  });

  it('the final bytes wait at the gate: the ESP has nothing complete until it opens', async () => {
    const sandbox = await startSandbox();
    const provider = adapter(kind, sandbox);
    const gate = opening();
    const sending = send(provider, message('held@accept.test'), gate.wait);
    await gate.asked;
    // Everything but the final bytes is out: given time, the sandbox still has no message.
    await pause(300);
    expect(sandbox.accepted()).toHaveLength(0);
    gate.open();
    const { outcome, submitted, messageId } = await sending;
    expectKind(outcome, 'accepted');
    expect(submitted).toBe(1);
    expect(recorded(sandbox, messageId)).toHaveLength(1);
  });

  it('a gate that refuses: never at the ESP, transient and not submitted, and the next send is whole', async () => {
    const sandbox = await startSandbox();
    const provider = adapter(kind, sandbox);
    const refused = await send(provider, message('refused@accept.test'), () =>
      Promise.reject(new Error('Redis unreachable')),
    );
    const deferred = expectKind(refused.outcome, 'deferred');
    expect(deferred).toMatchObject({ family: 'transient_system', answered: false });
    expect(deferred.reply).toMatch(/Redis unreachable/);
    expect(refused.submitted).toBe(1);
    await pause(300);
    expect(sandbox.accepted()).toHaveLength(0);
    // The aborted request's bytes went nowhere: a reused connection carries the next one cleanly.
    const next = await send(provider, message('next@accept.test'));
    expectKind(next.outcome, 'accepted');
    expect(sandbox.accepted().map((r) => r.to[0])).toEqual(['next@accept.test']);
    expect(sandbox.stats().duplicates).toBe(0);
  });

  it('connection refused: deferred transient_system, nothing submitted', async () => {
    const provider = adapter(kind, await deadEnd());
    const { outcome, submitted } = await send(provider, message('ok@accept.test'));
    const deferred = expectKind(outcome, 'deferred');
    expect(deferred.family).toBe('transient_system');
    expect(deferred.reply).toMatch(/ECONNREFUSED/);
    expect(submitted).toBe(0);
  });

  it('template: sent by name where the ESP stores templates, refused without a call over SMTP', async () => {
    const template = { name: 'welcome', data: { first: 'Ada' } };
    const m = message('t@accept.test', { template, text: undefined, html: undefined, subject: undefined });
    if (kind === 'smtp') {
      const { outcome, submitted } = await send(adapter(kind, await deadEnd()), m);
      expect(expectKind(outcome, 'rejected')).toMatchObject({ family: 'content_rejected', suppress: false });
      expect(outcome.reply).toMatch(/template/);
      expect(submitted).toBe(0);
      return;
    }
    const sandbox = await startSandbox();
    const { outcome, messageId } = await send(adapter(kind, sandbox), m);
    expectKind(outcome, 'accepted');
    expect(recorded(sandbox, messageId)).toMatchObject([{ to: ['t@accept.test'], sluiceId: m.id }]);
  });

  it('raw MIME: sent as is with our Message-ID, refused without a call by SendGrid', async () => {
    const raw = [
      'From: Sluice Test <sender@sluice.test>',
      'To: r@accept.test',
      'Subject: Raw hello',
      'Content-Type: text/plain',
      '',
      'Hi.',
      '',
    ].join('\r\n');
    const m = message('r@accept.test', {
      raw,
      text: undefined,
      html: undefined,
      subject: undefined,
      headers: undefined,
    });
    if (kind === 'sendgrid') {
      const { outcome, submitted } = await send(adapter(kind, await deadEnd()), m);
      expect(expectKind(outcome, 'rejected')).toMatchObject({ family: 'content_rejected', suppress: false });
      expect(outcome.reply).toMatch(/raw MIME/);
      expect(submitted).toBe(0);
      return;
    }
    const sandbox = await startSandbox();
    const { outcome, messageId } = await send(adapter(kind, sandbox), m);
    expectKind(outcome, 'accepted');
    expect(recorded(sandbox, messageId)).toMatchObject([{ to: ['r@accept.test'], subject: 'Raw hello' }]);
  });

  it('credentials: wired through, and never in a reply', async () => {
    const secret = kind === 'sendgrid' ? 'SG.right-secret-key' : 'right-secret-key';
    const wrong = kind === 'sendgrid' ? 'SG.wrong-secret-key' : 'wrong-secret-key';
    const sandbox = await startSandbox(
      kind === 'ses'
        ? { accessKeyId: 'AKIDRIGHT' }
        : kind === 'sendgrid'
          ? { sendgridApiKey: secret }
          : kind === 'mailgun'
            ? { mailgunApiKey: secret }
            : { smtpUser: 'sluice', smtpPassword: secret },
    );
    const credentials = (key: string): Record<string, unknown> => {
      if (kind === 'ses')
        return { accessKeyId: key === secret ? 'AKIDRIGHT' : 'AKIDWRONG', secretAccessKey: key, endpoint: sandbox.url };
      if (kind === 'smtp') return { host: '127.0.0.1', port: sandbox.smtpPort, user: 'sluice', password: key };
      return { apiKey: key, endpoint: sandbox.url };
    };
    const right = adapter(kind, sandbox, credentials(secret));
    expect(right.sandbox).toBe(false);
    expectKind((await send(right, message('ok@accept.test'))).outcome, 'accepted');
    const { outcome } = await send(adapter(kind, sandbox, credentials(wrong)), message('ok@accept.test'));
    expect(outcome.kind).not.toBe('accepted');
    expect(outcome.reply).not.toBe('');
    expect(JSON.stringify(outcome)).not.toContain('secret-key');
  });

  it('check: reachable, with the account quota where the ESP reports one', async () => {
    const sandbox = await startSandbox({ scenario: { account: { maxSendRate: 14, max24HourSend: 50_000 } } });
    const result = await adapter(kind, sandbox).check();
    expect(result.ok, JSON.stringify(result)).toBe(true);
    if (kind === 'ses' && result.ok) {
      expect(result.quota).toEqual({
        maxSendRate: 14,
        max24HourSend: 50_000,
        sentLast24Hours: 0,
        sendingEnabled: true,
      });
    }
  });
});

describe('smtp adapter: receiver answers', () => {
  it('defer (452 4.2.2) is mailbox_temporary', async () => {
    const sandbox = await startSandbox({ scenario: { default: { defer: ['full@*'] } } });
    const deferred = expectKind((await send(adapter('smtp', sandbox), message('full@mx.test'))).outcome, 'deferred');
    expect(deferred.family).toBe('mailbox_temporary');
  });

  it('greylisting: greylisted first, accepted on the second try', async () => {
    const sandbox = await startSandbox({ scenario: { default: { greylist: true } } });
    const provider = adapter('smtp', sandbox);
    const m = message('new@grey.test');
    const first = expectKind((await send(provider, m)).outcome, 'deferred');
    expect(first.family).toBe('greylisted');
    const { outcome, messageId } = await send(provider, m);
    expectKind(outcome, 'accepted');
    expect(recorded(sandbox, messageId)).toHaveLength(1);
  });

  it('block (550 5.7.1) is policy_block and keeps the address', async () => {
    const sandbox = await startSandbox({ scenario: { default: { block: ['*@blocked.test'] } } });
    const rejected = expectKind((await send(adapter('smtp', sandbox), message('x@blocked.test'))).outcome, 'rejected');
    expect(rejected).toMatchObject({ family: 'policy_block', suppress: false });
  });

  it('connection dropped before DATA: deferred, not ambiguous', async () => {
    const sandbox = await startSandbox({ scenario: { default: { dropBeforeData: ['early@*'] } } });
    const { outcome, submitted } = await send(adapter('smtp', sandbox), message('early@drop.test'));
    expect(expectKind(outcome, 'deferred').family).toBe('transient_system');
    expect(submitted).toBe(0);
    expect(sandbox.accepted()).toHaveLength(0);
  });
});

describe('credentials an ESP echoes back', () => {
  /** An API that answers 401 quoting the Authorization header it got, decoded too. */
  async function echoingEsp(kind: 'sendgrid' | 'mailgun'): Promise<string> {
    const server = createServer((req, res) => {
      req.resume();
      const auth = req.headers.authorization ?? '';
      const decoded = Buffer.from(auth.replace(/^Basic /, ''), 'base64').toString('utf8');
      const said = `bad credentials: ${auth} (${decoded})`;
      res.writeHead(401, { 'content-type': 'application/json' });
      res.end(JSON.stringify(kind === 'sendgrid' ? { errors: [{ message: said, field: null }] } : { message: said }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    track({ close: () => new Promise<void>((resolve) => server.close(() => resolve())) });
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  it.each(['sendgrid', 'mailgun'] as const)('%s: the key is hidden in the reply', async (kind) => {
    const url = await echoingEsp(kind);
    const key = kind === 'sendgrid' ? 'SG.echoed-secret-key' : 'echoed-secret-key';
    const { outcome } = await send(
      adapter(kind, { url, smtpPort: 1 }, { apiKey: key, endpoint: url }),
      message('ok@accept.test'),
    );
    expect(outcome.reply).toMatch(/bad credentials/);
    expect(JSON.stringify(outcome)).not.toContain('secret-key');
  });
});

describe('sendgrid adapter: mail headers', () => {
  it('stay in the mail: an Authorization or Content-Length mail header does not reach the HTTP request', async () => {
    const sandbox = await startSandbox({ sendgridApiKey: 'SG.right-key' });
    const provider = adapter('sendgrid', sandbox, { apiKey: 'SG.right-key', endpoint: sandbox.url });
    const headers = { Authorization: 'Bearer SG.other', 'Content-Length': '3' };
    const { outcome, messageId } = await send(provider, message('h@accept.test', { headers }));
    expectKind(outcome, 'accepted');
    expect(recorded(sandbox, messageId)).toHaveLength(1);
  });
});
