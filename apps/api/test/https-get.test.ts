import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { selfSignedCertificate } from '../../../packages/events/test/support/sns-signer.js';
import { httpsGet } from '../src/internal/https-get.js';

let server: Server;
let base: string;
let cert: string;

beforeAll(async () => {
  const made = selfSignedCertificate('127.0.0.1', ['127.0.0.1']);
  const key = made.key;
  cert = made.certificate;
  server = createServer({ key, cert }, (req, res) => {
    if (req.url === '/cert.pem') res.end('-----BEGIN CERTIFICATE-----');
    else if (req.url === '/big') res.end('x'.repeat(100_000));
    else if (req.url === '/hang') res.write('partial');
    else if (req.url === '/moved') res.writeHead(302, { location: 'https://169.254.169.254/' }).end();
    else if (req.url === '/moved-within') res.writeHead(301, { location: '/cert.pem' }).end();
    else if (req.url === '/silent')
      return; // never answers
    else if (req.url === '/trickle') {
      // A byte every 50 ms: never idle long, but never done within the deadline.
      const timer = setInterval(() => res.write('x'), 50);
      res.on('close', () => clearInterval(timer));
    } else res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

describe('the default certificate fetcher and subscription confirmer (httpsGet)', () => {
  // Answers get 5 s (a first TLS handshake on a loaded machine took over 500 ms in CI); the
  // deadline test gives 500 ms.
  const options = (timeoutMs = 5_000) => ({ timeoutMs, maxBytes: 64 * 1024, ca: cert });

  it('returns the body of a 2xx', async () => {
    expect(await httpsGet(`${base}/cert.pem`, options())).toBe('-----BEGIN CERTIFICATE-----');
  });

  it('refuses http, a non-2xx and an oversized body', async () => {
    await expect(httpsGet(`http://127.0.0.1/cert.pem`, options())).rejects.toThrow(/only https/);
    await expect(httpsGet(`${base}/missing.pem`, options())).rejects.toThrow(/answered 404/);
    await expect(httpsGet(`${base}/big`, options())).rejects.toThrow(/over 65536 bytes/);
  });

  it('follows no redirect, not even to the same host', async () => {
    await expect(httpsGet(`${base}/moved`, options())).rejects.toThrow(/redirect/);
    await expect(httpsGet(`${base}/moved-within`, options())).rejects.toThrow(/redirect/);
  });

  it('gives up after timeoutMs on a server that does not answer, stops mid-body, or trickles', async () => {
    for (const path of ['/silent', '/hang', '/trickle']) {
      const started = Date.now();
      await expect(httpsGet(`${base}${path}`, options(500))).rejects.toThrow(/timed out/);
      expect(Date.now() - started).toBeLessThan(2_000);
    }
  });

  it('does not trust a certificate it was not given', async () => {
    await expect(httpsGet(`${base}/cert.pem`, { timeoutMs: 500, maxBytes: 1024 })).rejects.toThrow(
      /self.signed|certificate/i,
    );
  });
});
