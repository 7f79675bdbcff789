import { createServer, request, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { holdLastByte } from '../src/internal/hold-last-byte.js';
import { closedPort, track } from './support.js';

/** A server that keeps every request body it received whole (its `end` came). */
async function server(): Promise<{ port: number; bodies: Buffer[]; seen: () => number }> {
  const bodies: Buffer[] = [];
  let seen = 0;
  const s = createServer((req: IncomingMessage, res) => {
    seen += 1;
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('error', () => undefined);
    req.on('end', () => {
      bodies.push(Buffer.concat(chunks));
      res.end('ok');
    });
  });
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  track({
    close: () =>
      new Promise<void>((resolve) => {
        s.closeAllConnections();
        s.close(() => resolve());
      }),
  });
  return { port: (s.address() as AddressInfo).port, bodies, seen: () => seen };
}

const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** A gate the test opens or refuses, and what the request did. */
function gated() {
  let open!: () => void;
  let refuse!: (e: Error) => void;
  let asked!: () => void;
  const wasAsked = new Promise<void>((resolve) => (asked = resolve));
  const opened = new Promise<void>((resolve, reject) => {
    open = resolve;
    refuse = reject;
  });
  opened.catch(() => undefined);
  let submitted = false;
  return {
    gate: {
      gate: () => {
        asked();
        return opened;
      },
      markSubmitted: () => (submitted = true),
    },
    wasAsked,
    open,
    refuse,
    submitted: () => submitted,
  };
}

type Writer = (req: ReturnType<typeof request>) => void;

// How SDKs hand over a body: all at once, or written piece by piece (a piped stream), with
// and without a length (chunked), as strings in any encoding, Buffers and Uint8Arrays.
const WRITERS: [string, Buffer, Writer, boolean][] = [
  ['end(string) with a length', Buffer.from('{"a":"é"}'), (r) => r.end('{"a":"é"}'), true],
  [
    'write(latin1 string), write(Uint8Array), end(hex string), chunked',
    Buffer.concat([Buffer.from('ab', 'latin1'), Buffer.from([1, 2, 3]), Buffer.from('ff00', 'hex')]),
    (r) => {
      r.write('ab', 'latin1');
      r.write(new Uint8Array([9, 1, 2, 3, 9]).subarray(1, 4));
      r.end('ff00', 'hex');
    },
    false,
  ],
  [
    'write(Buffer) of one byte at a time, then a body-less end(), chunked',
    Buffer.from('xyz'),
    (r) => {
      for (const c of 'xyz') r.write(Buffer.from(c));
      r.end();
    },
    false,
  ],
];

describe('holdLastByte', () => {
  it.each(WRITERS)(
    '%s: nothing whole until the gate opens, then the exact body',
    async (_name, body, writeTo, sized) => {
      const { port, bodies } = await server();
      const g = gated();
      const req = request({
        port,
        host: '127.0.0.1',
        method: 'POST',
        headers: sized ? { 'content-length': body.length } : {},
      });
      holdLastByte(req, g.gate);
      const answered = new Promise<IncomingMessage>((resolve) => req.once('response', resolve));
      writeTo(req);
      await g.wasAsked;
      await pause(200);
      expect(bodies).toHaveLength(0);
      expect(g.submitted()).toBe(false);
      g.open();
      (await answered).resume();
      expect(g.submitted()).toBe(true);
      expect(bodies).toEqual([body]);
    },
  );

  it('a refused gate destroys the request: the server never has its body', async () => {
    const { port, bodies, seen } = await server();
    const g = gated();
    const req = request({ port, host: '127.0.0.1', method: 'POST', headers: { 'content-length': 5 } });
    holdLastByte(req, g.gate);
    const failed = new Promise<Error>((resolve) => req.once('error', resolve));
    req.end('hello');
    await g.wasAsked;
    g.refuse(new Error('Redis unreachable'));
    const error = await failed;
    expect(error).toMatchObject({ code: 'ESUBMITGATE' });
    expect(error.message).toMatch(/Redis unreachable/);
    await pause(200);
    expect(seen()).toBe(1);
    expect(bodies).toHaveLength(0);
    expect(g.submitted()).toBe(false);
  });

  it('a refused connection never asks the gate', async () => {
    const g = gated();
    let asked = false;
    void g.wasAsked.then(() => (asked = true));
    const req = request({ port: await closedPort(), host: '127.0.0.1', method: 'POST' });
    holdLastByte(req, g.gate);
    const failed = new Promise<Error>((resolve) => req.once('error', resolve));
    req.end('hello');
    expect(await failed).toMatchObject({ code: 'ECONNREFUSED' });
    expect(asked).toBe(false);
  });
});
