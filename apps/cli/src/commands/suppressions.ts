import type { SuppressionEntry } from '@sluice/client';
import { JSON_OPTION, requireText } from '../args.js';
import type { Command, Context } from '../context.js';
import { fields, json, table } from '../format.js';

const TENANT = {
  tenant: { type: 'string', value: '<tenant>', help: 'the tenant whose list it is (default: default)' },
} as const;
const ADDRESS = [{ name: 'address', help: 'an email address (compared lower-cased)' }] as const;

const tenantOf = (value: string | boolean | undefined): string => (typeof value === 'string' ? value : 'default');
const at = (e: SuppressionEntry): string | undefined => (e.at === undefined ? undefined : new Date(e.at).toISOString());

function print(ctx: Context, data: unknown, text: string): void {
  ctx.print(ctx.json ? json(data) : text);
}

const list: Command = {
  path: ['suppressions', 'list'],
  usage: '[--tenant <tenant>] [--json]',
  summary: "a tenant's suppressed addresses",
  args: [],
  options: { ...TENANT, ...JSON_OPTION },
  async run(ctx, { values }) {
    const tenant = tenantOf(values.tenant);
    const client = await ctx.client();
    const entries: SuppressionEntry[] = [];
    let cursor = '0';
    do {
      const page = await client.suppressions.list(tenant, { cursor, count: 1000 });
      entries.push(...page.entries);
      cursor = page.cursor;
    } while (cursor !== '0');
    entries.sort((a, b) => a.address.localeCompare(b.address));
    print(
      ctx,
      entries,
      table(
        ['address', 'source', 'provider', 'at', 'reason'],
        entries.map((e) => [e.address, e.source, e.provider, at(e), e.reason]),
      ),
    );
    return 0;
  },
};

const get: Command = {
  path: ['suppressions', 'get'],
  usage: '<address> [--tenant <tenant>] [--json]',
  summary: 'whether an address is suppressed, and why (exits 1 if it is not)',
  args: ADDRESS,
  options: { ...TENANT, ...JSON_OPTION },
  async run(ctx, { values, args }) {
    const tenant = tenantOf(values.tenant);
    const e = await (await ctx.client()).suppressions.get(tenant, args.address!);
    if (!e) {
      print(ctx, null, `${args.address} is not suppressed for tenant ${tenant}`);
      return 1;
    }
    print(
      ctx,
      e,
      fields([
        ['address', e.address],
        ['tenant', tenant],
        ['source', e.source],
        ['provider', e.provider],
        ['at', at(e)],
        ['reason', e.reason],
      ]),
    );
    return 0;
  },
};

const add: Command = {
  path: ['suppressions', 'add'],
  usage: '<address> --reason <text> [--tenant <tenant>] [--json]',
  summary: 'suppress an address by hand (source manual)',
  description: [
    'An address already suppressed keeps its first entry; the command says so and changes nothing.',
    '',
    'Example:',
    '  sluice suppressions add jane@example.com --reason "asked us by phone"',
  ],
  args: ADDRESS,
  options: {
    reason: { type: 'string', value: '<text>', help: 'why (required, at most 200 characters)' },
    ...TENANT,
    ...JSON_OPTION,
  },
  async run(ctx, { values, args }) {
    const reason = requireText(values.reason, 'reason', 'suppressions add');
    const tenant = tenantOf(values.tenant);
    const added = await (await ctx.client()).suppressions.add(tenant, args.address!, reason);
    print(
      ctx,
      { address: args.address, tenant, added },
      added
        ? `${args.address} suppressed for tenant ${tenant}`
        : `${args.address} was already suppressed for tenant ${tenant}; its entry is kept`,
    );
    return 0;
  },
};

const remove: Command = {
  path: ['suppressions', 'remove'],
  usage: '<address> [--tenant <tenant>] [--json]',
  summary: 'let mail to an address through again',
  args: ADDRESS,
  options: { ...TENANT, ...JSON_OPTION },
  async run(ctx, { values, args }) {
    const tenant = tenantOf(values.tenant);
    const removed = await (await ctx.client()).suppressions.remove(tenant, args.address!);
    print(
      ctx,
      { address: args.address, tenant, removed },
      removed
        ? `${args.address} removed from tenant ${tenant}'s suppressions`
        : `${args.address} was not suppressed for tenant ${tenant}; nothing changed`,
    );
    return 0;
  },
};

/** `sluice suppressions …` */
export const suppressionCommands: readonly Command[] = [list, get, add, remove];
