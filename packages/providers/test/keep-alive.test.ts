import { describe, expect, it } from 'vitest';
import type { Sandbox } from '@sluice/sandbox';
import type { Outcome } from '../src/index.js';
import { idleFront } from './idle-front.js';
import { adapter, message, send, startSandbox, type Kind } from './support.js';

// The adapters whose requests go over keep-alive HTTP connections: SES and SendGrid through
// the agents Sluice gives their SDKs, Mailgun through Node's global agent.
const HTTP_KINDS: Kind[] = ['ses', 'sendgrid', 'mailgun'];

const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Keeps the event loop busy for `ms`, as a loaded worker's is: no timer runs meanwhile. */
function busy(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    // spin
  }
}

function records(sandbox: Sandbox, messageId: string) {
  return sandbox.accepted().filter((m) => m.messageId === messageId);
}

function kindOf(outcome: Outcome): string {
  return outcome.kind === 'ambiguous' ? `ambiguous (${outcome.reply})` : outcome.kind;
}

describe('keep-alive connections the ESP closes when idle', () => {
  // What the ESP's edge announces, when it closes an idle connection, and how long the test
  // idles: mostly asleep (timers may run), then busy past the close (they may not).
  const EDGES: [string, number | undefined, number, number, number][] = [
    ['announces its 5 s (as the sandbox, a Node server, does)', 5, 5_000, 3_600, 1_600],
    ['announces nothing and closes at 5 s', undefined, 5_000, 3_600, 1_600],
    ['announces 2 s and closes at 2 s', 2, 2_000, 600, 1_500],
  ];

  it.each(EDGES)(
    'an ESP that %s: a connection is never reused near its close, even when timers run late',
    async (_name, timeoutSeconds, closesAfterMs, sleepMs, busyMs) => {
      const sandbox = await startSandbox();
      const front = await idleFront(sandbox, closesAfterMs, { timeoutSeconds });
      const providers = HTTP_KINDS.map((kind) => adapter(kind, { url: front.url, smtpPort: sandbox.smtpPort }));
      const first = await Promise.all(providers.map((p) => send(p, message(`first@${p.kind}.test`))));
      for (const { outcome } of first) expect(outcome.kind).toBe('accepted');

      await pause(sleepMs);
      // The worker is busy past the ESP's close: timers that would retire the idle
      // connections have not run when the next sends start.
      busy(busyMs);
      const outcomes = await Promise.all(providers.map((p) => send(p, message(`second@${p.kind}.test`))));

      const seen = outcomes.map((o, i) => ({
        kind: HTTP_KINDS[i],
        outcome: kindOf(o.outcome),
        atEsp: records(sandbox, o.messageId).length,
      }));
      // Each went out on a fresh connection: accepted, at the ESP once. Never "ambiguous" for
      // a request the ESP never read (normal mail would be counted sent and silently lost),
      // nor a needless retry.
      expect(seen).toEqual(HTTP_KINDS.map((kind) => ({ kind, outcome: 'accepted', atEsp: 1 })));
      expect(front.refused).toBe(0);
    },
    20_000,
  );

  it('idle connections are closed by Sluice before the ESP closes them (announced 2 s: after 1 s)', async () => {
    const sandbox = await startSandbox();
    const front = await idleFront(sandbox, 2_000, { timeoutSeconds: 2 });
    const providers = HTTP_KINDS.map((kind) => adapter(kind, { url: front.url, smtpPort: sandbox.smtpPort }));
    const first = await Promise.all(providers.map((p) => send(p, message(`first@${p.kind}.test`))));
    for (const { outcome } of first) expect(outcome.kind).toBe('accepted');
    expect(front.connections).toBe(HTTP_KINDS.length);
    await pause(1_800);
    // Each adapter's one connection: closed from our side, none left for the ESP to close.
    expect(front.closedByClient).toBe(HTTP_KINDS.length);
  });

  it.each(HTTP_KINDS)(
    '%s: a connection the ESP closed just as the request went out: not submitted, and its retry is accepted once',
    async (kind) => {
      const sandbox = await startSandbox();
      const front = await idleFront(sandbox, Number.POSITIVE_INFINITY);
      const provider = adapter(kind, { url: front.url, smtpPort: sandbox.smtpPort });
      expect((await send(provider, message('first@accept.test'))).outcome.kind).toBe('accepted');

      // The ESP closes the idle connection; its FIN is on the way as the next send starts.
      const m = message('raced@accept.test');
      front.closeIdle();
      const raced = await send(provider, m);

      // Whatever the SDK saw, the ESP never had the request: it must not read as maybe-sent.
      expect(kindOf(raced.outcome)).not.toMatch(/^ambiguous/);
      if (raced.outcome.kind !== 'accepted') {
        expect(raced.outcome.kind).toBe('deferred');
        expect(records(sandbox, raced.messageId)).toHaveLength(0);
        const retry = await send(provider, m);
        expect(retry.outcome.kind).toBe('accepted');
      }
      expect(records(sandbox, raced.messageId)).toHaveLength(1);
      expect(sandbox.stats().duplicates).toBe(0);
    },
  );

  it.each(HTTP_KINDS)(
    '%s: a reused connection lost after the whole request went out is still ambiguous',
    async (kind) => {
      const sandbox = await startSandbox({ scenario: { default: { dropAfterData: ['lost@*'] } } });
      const provider = adapter(kind, sandbox);
      expect((await send(provider, message('first@accept.test'))).outcome.kind).toBe('accepted');
      const lost = await send(provider, message('lost@drop.test'));
      expect(lost.outcome.kind).toBe('ambiguous');
      expect(records(sandbox, lost.messageId)).toHaveLength(1);
    },
  );
});
