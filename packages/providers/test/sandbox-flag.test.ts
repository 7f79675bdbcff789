import { describe, expect, it } from 'vitest';
import { adapter, closedPort, message, send, startSandbox, type Kind } from './support.js';

const HTTP_KINDS: Kind[] = ['ses', 'sendgrid', 'mailgun'];

describe.each(HTTP_KINDS)('the %s adapter’s sandbox flag', (kind) => {
  it('is false with an endpoint and no credentials: mail goes to the endpoint, not the embedded sandbox', async () => {
    const endpoint = await startSandbox();
    // The embedded sandbox's address leads nowhere: a send that went there would fail.
    const port = await closedPort();
    const provider = adapter(kind, { url: `http://127.0.0.1:${port}`, smtpPort: port }, { endpoint: endpoint.url });
    expect(provider.sandbox).toBe(false);
    const m = message('ok@accept.test');
    const { outcome, messageId } = await send(provider, m);
    expect(outcome, JSON.stringify(outcome)).toMatchObject({ kind: 'accepted' });
    expect(endpoint.accepted().filter((r) => r.messageId === messageId)).toHaveLength(1);
  });

  it('is true with neither credentials nor an endpoint', async () => {
    const sandbox = await startSandbox();
    expect(adapter(kind, sandbox).sandbox).toBe(true);
  });
});
