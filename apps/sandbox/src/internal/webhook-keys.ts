import { execFile } from 'node:child_process';
import { generateKeyPair, generateKeyPairSync, randomBytes, type KeyObject } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

/** SNS's side: an RSA key and its self-signed X.509 certificate (PEM). */
export interface SnsIdentity {
  privateKey: KeyObject;
  certificate: string;
  /** The key as PEM, for the TLS server that serves the certificate. */
  privateKeyPem: string;
}

/** The keys the sandbox signs webhooks with, one set per sandbox (SNS's: one per process). */
export interface WebhookSigners {
  sns: SnsIdentity | undefined;
  sendgrid: { privateKey: KeyObject; publicKey: string };
  mailgunSigningKey: string;
}

let snsIdentity: Promise<SnsIdentity> | undefined;

/**
 * Makes the SNS identity: the key with node:crypto, the certificate with the openssl CLI
 * (node cannot issue one). The certificate names 127.0.0.1 and localhost, so it doubles as
 * the TLS certificate of the https server it is fetched from. Made once per process: RSA key
 * generation and openssl cost about 100 ms, too much for every sandbox a test suite starts.
 */
export function loadSnsIdentity(): Promise<SnsIdentity> {
  snsIdentity ??= (async () => {
    const { privateKey } = await promisify(generateKeyPair)('rsa', { modulusLength: 2048 });
    const privateKeyPem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    const dir = await mkdtemp(join(tmpdir(), 'sluice-sandbox-sns-'));
    try {
      await writeFile(join(dir, 'key.pem'), privateKeyPem);
      // -addext needs OpenSSL 1.1.1 or later (Debian bookworm has 3.0).
      const args = ['req', '-x509', '-new', '-key', join(dir, 'key.pem'), '-subj', '/CN=sns.sandbox.local'];
      args.push('-addext', 'subjectAltName=IP:127.0.0.1,DNS:localhost', '-days', '30', '-out', join(dir, 'cert.pem'));
      await promisify(execFile)('openssl', args);
      const certificate = await readFile(join(dir, 'cert.pem'), 'utf8');
      return { privateKey, privateKeyPem, certificate };
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  })();
  // A failure (no openssl) must not stick for the whole process.
  snsIdentity.catch(() => (snsIdentity = undefined));
  return snsIdentity;
}

/** SendGrid's side: a P-256 key pair, the public half as the SendGrid UI shows it. */
export function createSendgridKeys(): WebhookSigners['sendgrid'] {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  return { privateKey, publicKey: publicKey.export({ type: 'spki', format: 'der' }).toString('base64') };
}

/** Mailgun's HTTP webhook signing key: 32 hex digits, as Mailgun shows it. */
export function createMailgunSigningKey(): string {
  return randomBytes(16).toString('hex');
}

/** The path the SNS certificate is served at over https, shaped like SNS's own. */
export const SNS_CERT_PATH = '/SimpleNotificationService-sandbox.pem';

/**
 * Serves the SNS certificate over https, as SNS does (a `SigningCertURL` must be https),
 * with the certificate itself as the TLS certificate: trust it (`ca`, or
 * `NODE_EXTRA_CA_CERTS` for a process) to fetch it.
 */
export async function serveSnsCertificate(
  identity: SnsIdentity,
  host: string,
): Promise<{ server: Server; port: number }> {
  const server = createServer({ key: identity.privateKeyPem, cert: identity.certificate }, (req, res) => {
    if (req.method === 'GET' && req.url === SNS_CERT_PATH) {
      res.writeHead(200, { 'content-type': 'application/x-pem-file' }).end(identity.certificate);
    } else res.writeHead(404).end();
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return { server, port: (server.address() as AddressInfo).port };
}
