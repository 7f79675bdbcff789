import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { crc32 } from 'node:zlib';

/** Where a key may send: `live` keys send for real, `test` keys are for a tenant's own tests. */
export const KEY_ENVS = ['live', 'test'] as const;
/** One of {@link KEY_ENVS}. */
export type KeyEnv = (typeof KEY_ENVS)[number];

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
/** A key id's length: 12 base62 characters (71 bits), unique enough to never collide in practice. */
const ID_CHARS = 12;
/** The secret's length: 24 base62 characters, 142 bits from `randomBytes`. */
const SECRET_CHARS = 24;
/** CRC-32 of what comes before it, 6 base62 characters (62⁶ > 2³²). */
const CHECKSUM_CHARS = 6;

/** A Sluice API key as a scanner sees it: the prefix, then 42 base62 characters. */
export const KEY_PATTERN = new RegExp(`^slc_(live|test)_([0-9A-Za-z]{${ID_CHARS + SECRET_CHARS + CHECKSUM_CHARS}})$`);
/** The whole key's length (51). */
export const KEY_LENGTH = 'slc_live_'.length + ID_CHARS + SECRET_CHARS + CHECKSUM_CHARS;

/** `n` base62 characters from the system's CSPRNG, each uniform (bytes ≥ 248 are drawn again). */
function randomBase62(n: number): string {
  let out = '';
  while (out.length < n) {
    for (const byte of randomBytes(n * 2)) {
      if (byte < 248 && out.length < n) out += BASE62[byte % 62];
    }
  }
  return out;
}

function checksumOf(text: string): string {
  let value = crc32(text);
  let out = '';
  for (let i = 0; i < CHECKSUM_CHARS; i++) {
    out = BASE62[value % 62] + out;
    value = Math.floor(value / 62);
  }
  return out;
}

/** A key's parts, read from its token. */
export interface ParsedKey {
  env: KeyEnv;
  /** The key's public id: how it is listed, audited and looked up. */
  id: string;
  /** The last four characters, how a key is shown after its creation. */
  last4: string;
}

/** A new key: its token (shown once) and its parts. */
export function newKeyToken(env: KeyEnv): ParsedKey & { token: string } {
  const id = randomBase62(ID_CHARS);
  const body = `slc_${env}_${id}${randomBase62(SECRET_CHARS)}`;
  const token = body + checksumOf(body);
  return { token, env, id, last4: token.slice(-4) };
}

/**
 * A token's parts, or why it is not a Sluice key: `malformed` (another shape) or `checksum`
 * (the right shape with a wrong checksum: a typo or a cut). Asks nothing of Redis.
 */
export function parseKeyToken(token: string): ParsedKey | 'malformed' | 'checksum' {
  const m = KEY_PATTERN.exec(token);
  if (m === null) return 'malformed';
  const body = token.slice(0, -CHECKSUM_CHARS);
  if (checksumOf(body) !== token.slice(-CHECKSUM_CHARS)) return 'checksum';
  return { env: m[1] as KeyEnv, id: m[2]!.slice(0, ID_CHARS), last4: token.slice(-4) };
}

/** The token as it is stored: HMAC-SHA256 under the pepper, hex. */
export function keyHash(pepper: string, token: string): string {
  return createHmac('sha256', pepper).update(token).digest('hex');
}

/** Whether `token` is the one whose stored hash is `stored`, compared in constant time. */
export function keyMatches(pepper: string, token: string, stored: string): boolean {
  const a = Buffer.from(keyHash(pepper, token), 'hex');
  const b = Buffer.from(stored, 'hex');
  return a.length === b.length && timingSafeEqual(a, b);
}
