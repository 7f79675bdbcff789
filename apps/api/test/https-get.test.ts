import { execFileSync } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { httpsGet } from '../src/internal/https-get.js';

let server: Server;
let base: string;
let cert: string;

beforeAll(async () => {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const dir = mkdtempSync(join(tmpdir(), 'sluice-https-'));
  const key = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  writeFileSync(join(dir, 'key.pem'), key);
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-new',
      '-key',
      join(dir, 'key.pem'),
      '-subj',
      '/CN=127.0.0.1',
      '-addext',
      'subjectAltName=IP:127.0.0.1',
      '-days',
      '1',
      '-out',
      join(dir, 'cert.pem'),
    ],
    {
      stdio: 'ignore',
    },
  );
  cert = readFileSync(join(dir, 'cert.pem'), 'utf8');
  rmSync(dir, { recursive: true, force: true });
  server = createServer({ key, cert }, (req, res) => {
    if (req.url === '/cert.pem') res.end('-----BEGIN CERTIFICATE-----');
    else if (req.url === '/big') res.end('x'.repeat(100_000));
    else if (req.url === '/hang') res.write('partial');
    else if (req.url === '/moved') res.writeHead(302, { location: 'https://169.254.169.254/' }).end();
    else res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

describe('the default certificate fetcher and subscription confirmer (httpsGet)', () => {
  const options = () => ({ timeoutMs: 500, maxBytes: 64 * 1024, ca: cert });

  it('returns the body of a 2xx', async () => {
    expect(await httpsGet(`${base}/cert.pem`, options())).toBe('-----BEGIN CERTIFICATE-----');
  });

  it('refuses http, a non-2xx, a redirect, an oversized body and a server that never finishes', async () => {
    await expect(httpsGet(`http://127.0.0.1/cert.pem`, options())).rejects.toThrow(/only https/);
    await expect(httpsGet(`${base}/missing.pem`, options())).rejects.toThrow(/answered 404/);
    await expect(httpsGet(`${base}/moved`, options())).rejects.toThrow(/answered 302/);
    await expect(httpsGet(`${base}/big`, options())).rejects.toThrow(/over 65536 bytes/);
    await expect(httpsGet(`${base}/hang`, options())).rejects.toThrow(/timed out/);
  });

  it('does not trust a certificate it was not given', async () => {
    await expect(httpsGet(`${base}/cert.pem`, { timeoutMs: 500, maxBytes: 1024 })).rejects.toThrow(
      /self.signed|certificate/i,
    );
  });
});
