import { execFileSync } from 'node:child_process';
import { generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { snsStringToSign, type SnsEnvelope } from '@sluice/events';

/** A test signer standing in for SNS: its own RSA key and a self-signed X.509 certificate. */
export interface SnsSigner {
  /** The certificate, PEM: what `fetchCertificate` serves. */
  certificate: string;
  /** Signs an envelope the way SNS does (`SignatureVersion` from the envelope). */
  sign(envelope: Omit<SnsEnvelope, 'Signature'>): SnsEnvelope;
}

/** Makes a key with node:crypto and its certificate with the openssl CLI (node cannot issue one). */
export function createSnsSigner(): SnsSigner {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const dir = mkdtempSync(join(tmpdir(), 'sluice-sns-'));
  try {
    writeFileSync(join(dir, 'key.pem'), privateKey.export({ type: 'pkcs8', format: 'pem' }));
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-new',
        '-key',
        join(dir, 'key.pem'),
        '-subj',
        '/CN=sns.amazonaws.com',
        '-days',
        '1',
        '-out',
        join(dir, 'cert.pem'),
      ],
      {
        stdio: 'ignore',
      },
    );
    const certificate = readFileSync(join(dir, 'cert.pem'), 'utf8');
    return { certificate, sign: (e) => signWith(privateKey, e) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function signWith(key: KeyObject, envelope: Omit<SnsEnvelope, 'Signature'>): SnsEnvelope {
  const unsigned = { ...envelope, Signature: '' } as SnsEnvelope;
  const algorithm = envelope.SignatureVersion === '1' ? 'RSA-SHA1' : 'RSA-SHA256';
  return {
    ...unsigned,
    Signature: sign(algorithm, Buffer.from(snsStringToSign(unsigned), 'utf8'), key).toString('base64'),
  };
}
