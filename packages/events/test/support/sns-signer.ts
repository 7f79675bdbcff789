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

/**
 * An RSA key (node:crypto) and a self-signed certificate for it (the openssl CLI: node
 * cannot issue one), with `subject` as its CN and, when given, IP subject alt names.
 */
export function selfSignedCertificate(
  subject: string,
  ips: readonly string[] = [],
): { privateKey: KeyObject; key: string; certificate: string } {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const key = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  const dir = mkdtempSync(join(tmpdir(), 'sluice-cert-'));
  try {
    writeFileSync(join(dir, 'key.pem'), key);
    const san = ips.length > 0 ? ['-addext', `subjectAltName=${ips.map((ip) => `IP:${ip}`).join(',')}`] : [];
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-new',
        '-key',
        join(dir, 'key.pem'),
        '-subj',
        `/CN=${subject}`,
        ...san,
        '-days',
        '1',
        '-out',
        join(dir, 'cert.pem'),
      ],
      {
        stdio: 'ignore',
      },
    );
    return { privateKey, key, certificate: readFileSync(join(dir, 'cert.pem'), 'utf8') };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A signer with its own key and self-signed certificate. */
export function createSnsSigner(): SnsSigner {
  const { privateKey, certificate } = selfSignedCertificate('sns.amazonaws.com');
  return { certificate, sign: (e) => signWith(privateKey, e) };
}

function signWith(key: KeyObject, envelope: Omit<SnsEnvelope, 'Signature'>): SnsEnvelope {
  const unsigned = { ...envelope, Signature: '' } as SnsEnvelope;
  const algorithm = envelope.SignatureVersion === '1' ? 'RSA-SHA1' : 'RSA-SHA256';
  return {
    ...unsigned,
    Signature: sign(algorithm, Buffer.from(snsStringToSign(unsigned), 'utf8'), key).toString('base64'),
  };
}
