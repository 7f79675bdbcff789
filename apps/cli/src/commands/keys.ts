import type { ApiKeyRecord, ApiKeys } from '@sluice/store';
import { said } from './tenants.js';
import {
  ACTOR_OPTION,
  JSON_OPTION,
  STATUS_OPTIONS,
  actorOf,
  parseDuration,
  parseFutureTime,
  requireText,
  statusChange,
} from '../args.js';
import type { Command, Context } from '../context.js';
import { fields, json, table, when } from '../format.js';

/** Loaded on use, so `--help` and usage errors stay quick. */
async function apiKeys(ctx: Context): Promise<ApiKeys> {
  const { createApiKeys } = await import('@sluice/store');
  const d = await ctx.deps();
  return createApiKeys({ redis: d.redis, keys: d.keys, pepper: d.config.api.keys.pepper, clock: () => ctx.io.now() });
}

const TENANT_ARG = { name: 'tenant', help: 'the tenant the key sends for' } as const;
const ID_ARG = { name: 'id', help: "the key's id (12 characters, as `keys list` shows it)" } as const;

/** A comma-separated option's items, none when it is not given. */
const items = (value: string | boolean | undefined): string[] | undefined =>
  typeof value === 'string'
    ? value
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean)
    : undefined;

/** How a key is shown after its creation: never the token. */
const shown = (k: ApiKeyRecord): string => `slc_${k.env}_${k.id}…${k.last4}`;

function state(k: ApiKeyRecord, now: number): string {
  if (k.revokedAt !== undefined) return 'revoked';
  if (!k.owner.enabled || !k.platform.enabled) return `disabled by ${k.owner.enabled ? 'platform' : 'owner'}`;
  if (k.expiresAt !== undefined && k.expiresAt <= now) return 'expired';
  return k.expiresAt !== undefined ? `until ${new Date(k.expiresAt).toISOString()}` : 'active';
}

const create: Command = {
  path: ['keys', 'create'],
  usage:
    '<tenant> --scopes <list> [--name <text>] [--streams <list>] [--from-domains <list>] [--cidrs <list>] [--expires <duration>] [--test] [--json]',
  summary: 'make an API key for a tenant (the key is shown this once)',
  description: [
    'Scopes: messages:send, campaigns:write, outcomes:read, read, admin (all). Lists are',
    'comma-separated. Only a keyed hash of the key is stored: copy it now, it cannot be shown again.',
    '',
    'Example:',
    '  sluice keys create acme --scopes messages:send --streams otp,transactional --from-domains acme.com',
  ],
  args: [TENANT_ARG],
  options: {
    scopes: { type: 'string', value: '<list>', help: 'what it may do (required)' },
    name: { type: 'string', value: '<text>', help: 'a label ("billing backend")' },
    streams: { type: 'string', value: '<list>', help: 'the only streams its mail may name (default: any)' },
    'from-domains': { type: 'string', value: '<list>', help: "the only domains its mail's from may be at" },
    cidrs: { type: 'string', value: '<list>', help: 'the only source addresses or blocks it may be used from' },
    expires: { type: 'string', value: '<duration>', help: 'it ends after this long (90d, 12h)' },
    test: { type: 'boolean', help: 'a test key (slc_test_…), else a live one' },
    ...ACTOR_OPTION,
    ...JSON_OPTION,
  },
  async run(ctx, { values, args }) {
    const command = 'keys create';
    const scopes = items(requireText(values.scopes, 'scopes', command)) ?? [];
    const expires = typeof values.expires === 'string' ? parseDuration(values.expires, 'expires', command) : undefined;
    const actor = actorOf(values.actor, ctx.io.env, command);
    const { token, key } = await (
      await apiKeys(ctx)
    ).create(args.tenant!, {
      scopes: scopes as ApiKeyRecord['scopes'],
      env: values.test === true ? 'test' : 'live',
      ...(typeof values.name === 'string' ? { name: values.name } : {}),
      ...(items(values.streams) ? { streams: items(values.streams)! } : {}),
      ...(items(values['from-domains']) ? { fromDomains: items(values['from-domains'])! } : {}),
      ...(items(values.cidrs) ? { cidrs: items(values.cidrs)! } : {}),
      ...(expires !== undefined ? { expiresAt: ctx.io.now() + expires } : {}),
      actor,
    });
    ctx.print(
      ctx.json
        ? json({ token, key })
        : `${token}\n\nKey ${key.id} for tenant ${key.tenant} (${key.scopes.join(', ')}). This is the only time it is shown.`,
    );
    return 0;
  },
};

const list: Command = {
  path: ['keys', 'list'],
  usage: '<tenant> [--json]',
  summary: "a tenant's API keys, by id and last four",
  args: [TENANT_ARG],
  options: { ...JSON_OPTION },
  async run(ctx, { args }) {
    const keys = await (await apiKeys(ctx)).list(args.tenant!);
    const now = ctx.io.now();
    ctx.print(
      ctx.json
        ? json(keys)
        : table(
            ['key', 'name', 'scopes', 'streams', 'state', 'created'],
            keys.map((k) => [
              shown(k),
              k.name,
              k.scopes.join(','),
              k.streams.join(',') || 'any',
              state(k, now),
              new Date(k.createdAt).toISOString(),
            ]),
          ),
    );
    return 0;
  },
};

const rotate: Command = {
  path: ['keys', 'rotate'],
  usage: '<tenant> <id> --old-until <time|now|duration> [--json]',
  summary: 'a new key with the same settings; the old one works until the time given',
  description: [
    'The new key is in force at once and shown this once. The old one keeps working until',
    '--old-until (an ISO time, a duration from now such as 24h, or now; at most 7 days).',
  ],
  args: [TENANT_ARG, ID_ARG],
  options: {
    'old-until': { type: 'string', value: '<time|now|duration>', help: 'when the old key ends (required)' },
    ...ACTOR_OPTION,
    ...JSON_OPTION,
  },
  async run(ctx, { values, args }) {
    const command = 'keys rotate';
    const text = requireText(values['old-until'], 'old-until', command);
    const now = ctx.io.now();
    const oldUntil =
      text === 'now'
        ? now
        : /^\d{4}-/.test(text)
          ? parseFutureTime(text, 'old-until', command, now)
          : now + parseDuration(text, 'old-until', command);
    const actor = actorOf(values.actor, ctx.io.env, command);
    const { token, key } = await (await apiKeys(ctx)).rotate(args.tenant!, args.id!, { oldUntil, actor });
    ctx.print(
      ctx.json
        ? json({ token, key })
        : `${token}\n\nKey ${key.id} replaces ${args.id}, which ends ${when(oldUntil, now) ?? 'now'}. This is the only time it is shown.`,
    );
    return 0;
  },
};

const revoke: Command = {
  path: ['keys', 'revoke'],
  usage: '<tenant> <id> --reason <text> [--json]',
  summary: 'end a key at once, at every api process',
  args: [TENANT_ARG, ID_ARG],
  options: {
    reason: { type: 'string', value: '<text>', help: 'why (required; kept in the audit trail)' },
    ...ACTOR_OPTION,
    ...JSON_OPTION,
  },
  async run(ctx, { values, args }) {
    const reason = requireText(values.reason, 'reason', 'keys revoke');
    const actor = actorOf(values.actor, ctx.io.env, 'keys revoke');
    const key = await (await apiKeys(ctx)).revoke(args.tenant!, args.id!, { reason, actor });
    ctx.print(
      ctx.json
        ? json(key)
        : fields([
            ['key', shown(key)],
            ['tenant', key.tenant],
            ['revoked', new Date(key.revokedAt!).toISOString()],
          ]),
    );
    return 0;
  },
};

const status: Command = {
  path: ['keys', 'status'],
  usage: '<tenant> <id> <enable|disable> --as <owner|platform> --reason <text> [--json]',
  summary: "set the owner's or the platform's say on whether mail is sent with a key",
  description: [
    'Mail sent with a key is refused (key_disabled) while either its owner or the platform has',
    'it disabled; the key still reads. Unlike a revocation, it can be enabled again.',
  ],
  args: [TENANT_ARG, ID_ARG, { name: 'state', help: 'enable or disable' }],
  options: { ...STATUS_OPTIONS, ...JSON_OPTION },
  async run(ctx, { values, args }) {
    const change = statusChange(args.state, values, ctx.io.env, 'keys status');
    const key = await (await apiKeys(ctx)).setStatus(args.tenant!, args.id!, change);
    ctx.print(
      ctx.json
        ? json(key)
        : fields([
            ['key', shown(key)],
            ['tenant', key.tenant],
            ['owner', said(key.owner)],
            ['platform', said(key.platform)],
          ]),
    );
    return 0;
  },
};

/** `sluice keys …`. */
export const keyCommands: readonly Command[] = [create, list, rotate, revoke, status];
