import { z } from 'zod';
import { SluiceError, cidr } from '@sluice/core';
import type { KeyEnv } from './token.js';

/** What a key may do; a route names the one it needs, `admin` holds them all. */
export const KEY_SCOPES = ['messages:send', 'campaigns:write', 'outcomes:read', 'read', 'admin'] as const;
/** One of {@link KEY_SCOPES}. */
export type KeyScope = (typeof KEY_SCOPES)[number];

/** Who sets a tenant's status: its own admin (`owner`) or the platform's operators (`platform`). */
export const STATUS_PARTIES = ['owner', 'platform'] as const;
/** One of {@link STATUS_PARTIES}. */
export type StatusParty = (typeof STATUS_PARTIES)[number];

/** One party's say on whether a tenant sends. */
export interface TenantStatus {
  enabled: boolean;
  /** Why it was last set (empty when never set). */
  reason: string;
  /** When it was last set, epoch ms (0: never). */
  at: number;
  /** Who set it (an actor name, `cli` by default). */
  by: string;
}

/** A tenant's record (`keys.tenant`). */
export interface TenantRecord {
  id: string;
  createdAt: number;
  owner: TenantStatus;
  platform: TenantStatus;
  /** The plan it is on (`plans.<name>` of the config), if any: its caps. */
  plan: string | undefined;
}

/** An API key's record (`keys.apiKey`): never the token, only its keyed hash. */
export interface ApiKeyRecord {
  id: string;
  tenant: string;
  env: KeyEnv;
  /** A label of the caller's ("billing backend"). */
  name: string;
  scopes: KeyScope[];
  /** The streams its messages may name (empty: any). */
  streams: string[];
  /** The domains its messages' `from` may be at (empty: any). */
  fromDomains: string[];
  /** The source addresses it may be used from (empty: any). */
  cidrs: string[];
  /** How it is shown: `slc_live_<id>…<last4>`. */
  last4: string;
  createdAt: number;
  /** After this it is refused as expired (undefined: never). */
  expiresAt: number | undefined;
  /** When it was revoked (undefined: it was not). */
  revokedAt: number | undefined;
  /** The key that replaced it by rotation. */
  rotatedTo: string | undefined;
  /** The key it replaced by rotation. */
  rotatedFrom: string | undefined;
  /** The tenant owner's say on whether mail is sent with it (`sluice keys status`, an admin key). */
  owner: TenantStatus;
  /** The platform's say on whether mail is sent with it. */
  platform: TenantStatus;
}

/** A tenant id: `[A-Za-z0-9_-]{1,64}`, as a message's `tenantId`. */
export const TENANT_ID = /^[A-Za-z0-9_-]{1,64}$/;

const list = (raw: string | undefined): string[] => (raw ? raw.split(',') : []);
const time = (raw: string | undefined): number | undefined => (raw && raw !== '0' ? Number(raw) : undefined);

/** The hash fields of a key record. */
export function encodeKey(key: ApiKeyRecord, hash: string): Record<string, string> {
  return {
    tenant: key.tenant,
    env: key.env,
    name: key.name,
    scopes: key.scopes.join(','),
    streams: key.streams.join(','),
    fromDomains: key.fromDomains.join(','),
    cidrs: key.cidrs.join(','),
    last4: key.last4,
    hash,
    createdAt: String(key.createdAt),
    expiresAt: String(key.expiresAt ?? 0),
    revokedAt: String(key.revokedAt ?? 0),
    rotatedTo: key.rotatedTo ?? '',
    rotatedFrom: key.rotatedFrom ?? '',
    ...statusFields('owner', key.owner),
    ...statusFields('platform', key.platform),
  };
}

/** A status never set: enabled. */
export const ENABLED: TenantStatus = { enabled: true, reason: '', at: 0, by: '' };

/** A key record and its stored hash, or undefined for a missing (or half-written) hash. */
export function decodeKey(id: string, f: Record<string, string>): { key: ApiKeyRecord; hash: string } | undefined {
  if (!f.hash || !f.tenant) return undefined;
  const key: ApiKeyRecord = {
    id,
    tenant: f.tenant,
    env: f.env === 'test' ? 'test' : 'live',
    name: f.name ?? '',
    scopes: list(f.scopes).filter((s): s is KeyScope => (KEY_SCOPES as readonly string[]).includes(s)),
    streams: list(f.streams),
    fromDomains: list(f.fromDomains),
    cidrs: list(f.cidrs),
    last4: f.last4 ?? '',
    createdAt: Number(f.createdAt ?? 0),
    expiresAt: time(f.expiresAt),
    revokedAt: time(f.revokedAt),
    rotatedTo: f.rotatedTo || undefined,
    rotatedFrom: f.rotatedFrom || undefined,
    owner: statusOf(f, 'owner'),
    platform: statusOf(f, 'platform'),
  };
  return { key, hash: f.hash };
}

const statusFields = (party: StatusParty, s: TenantStatus): Record<string, string> => ({
  [`${party}`]: s.enabled ? 'enabled' : 'disabled',
  [`${party}Reason`]: s.reason,
  [`${party}At`]: String(s.at),
  [`${party}By`]: s.by,
});

/** One party's status in a tenant's or key's hash (enabled when never set). */
function statusOf(f: Record<string, string>, party: StatusParty): TenantStatus {
  return {
    enabled: f[party] !== 'disabled',
    reason: f[`${party}Reason`] ?? '',
    at: Number(f[`${party}At`] ?? 0),
    by: f[`${party}By`] ?? '',
  };
}

/** The hash fields of one party's status. */
export function encodeStatus(party: StatusParty, status: TenantStatus): Record<string, string> {
  return statusFields(party, status);
}

/** A tenant record, or undefined when the hash is missing. */
export function decodeTenant(id: string, f: Record<string, string>): TenantRecord | undefined {
  if (!f.createdAt) return undefined;
  return {
    id,
    createdAt: Number(f.createdAt),
    owner: statusOf(f, 'owner'),
    platform: statusOf(f, 'platform'),
    plan: f.plan || undefined,
  };
}

const domain = z
  .string()
  .regex(/^(?=.{1,253}$)([A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z]{2,63}$/, {
    message: 'must be a domain name',
  })
  .transform((d) => d.toLowerCase());
/** What a new key may be given (checked: a bad field is named, and nothing is written). */
export const keyInputSchema = z.strictObject({
  env: z.enum(['live', 'test']).default('live'),
  name: z.string().max(200).default(''),
  scopes: z
    .array(z.enum(KEY_SCOPES, { message: `must be one of ${KEY_SCOPES.join(', ')}` }))
    .min(1, { message: 'must name at least one scope' })
    .transform((s) => [...new Set(s)]),
  streams: z.array(z.string().regex(TENANT_ID, { message: 'must match [A-Za-z0-9_-]{1,64}' })).default([]),
  fromDomains: z.array(domain).default([]),
  cidrs: z.array(cidr).default([]),
  /** Epoch ms; must be in the future. */
  expiresAt: z.number().int().positive().optional(),
});
/** The input of a new key (see {@link keyInputSchema}). */
export type KeyInput = z.input<typeof keyInputSchema>;

/** Parses a key's input, or throws `invalid_argument` naming the field. */
export function parseKeyInput(input: KeyInput, now: number): z.output<typeof keyInputSchema> {
  const parsed = keyInputSchema.safeParse(input);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const path = issue.path.join('.');
    throw new SluiceError('invalid_argument', `${path || 'key'}: ${issue.message}`, { path });
  }
  if (parsed.data.expiresAt !== undefined && parsed.data.expiresAt <= now) {
    throw new SluiceError('invalid_argument', 'expiresAt: must be in the future', { path: 'expiresAt' });
  }
  return parsed.data;
}
