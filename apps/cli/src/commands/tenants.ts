import type { TenantRecord, Tenants, TenantStatus } from '@sluice/store';
import { ACTOR_OPTION, JSON_OPTION, STATUS_OPTIONS, actorOf, parseCount, statusChange } from '../args.js';
import type { Command, Context } from '../context.js';
import { fields, json, table } from '../format.js';

/** Loaded on use, so `--help` and usage errors stay quick. */
async function tenants(ctx: Context): Promise<Tenants> {
  const { createTenants } = await import('@sluice/store');
  const d = await ctx.deps();
  return createTenants({ redis: d.redis, keys: d.keys, clock: () => ctx.io.now() });
}

const TENANT_ARG = { name: 'tenant', help: 'the tenant id ([A-Za-z0-9_-]{1,64})' } as const;

/** A status as a line: enabled or disabled, by whom, when and why. */
export const said = (s: TenantStatus): string =>
  `${s.enabled ? 'enabled' : 'disabled'}${s.at ? ` by ${s.by} at ${new Date(s.at).toISOString()}` : ''}${s.reason ? `: ${s.reason}` : ''}`;

function shown(t: TenantRecord): string {
  return fields([
    ['tenant', t.id],
    ['created', new Date(t.createdAt).toISOString()],
    ['owner', said(t.owner)],
    ['platform', said(t.platform)],
    ['plan', t.plan ?? 'none (no caps)'],
  ]);
}

/** The config's plan names, checked before a tenant is put on one. */
async function knownPlans(ctx: Context): Promise<string[]> {
  return Object.keys((await ctx.deps()).config.plans);
}

const create: Command = {
  path: ['tenants', 'create'],
  usage: '<tenant> [--plan <name>] [--json]',
  summary: 'give a tenant a record, so keys can be made for it',
  args: [TENANT_ARG],
  options: {
    plan: { type: 'string', value: '<name>', help: "the plan it is on (one of the config's plans): its caps" },
    ...ACTOR_OPTION,
    ...JSON_OPTION,
  },
  async run(ctx, { values, args }) {
    const actor = actorOf(values.actor, ctx.io.env, 'tenants create');
    const t = await tenants(ctx);
    const { created } = await t.create(args.tenant!, { actor });
    const plan = typeof values.plan === 'string' ? values.plan : undefined;
    // A plan is checked against the config's and set (audited) on a new tenant only.
    const tenant =
      created && plan !== undefined
        ? await t.setPlan(args.tenant!, plan, { actor, knownPlans: await knownPlans(ctx) })
        : (await t.get(args.tenant!))!;
    ctx.print(ctx.json ? json({ tenant, created }) : `${created ? 'created' : 'exists already'}\n${shown(tenant)}`);
    return 0;
  },
};

const list: Command = {
  path: ['tenants', 'list'],
  usage: '[--json]',
  summary: 'every tenant with a record, and whether it sends',
  args: [],
  options: { ...JSON_OPTION },
  async run(ctx) {
    const all = await (await tenants(ctx)).list();
    ctx.print(
      ctx.json
        ? json(all)
        : table(
            ['tenant', 'owner', 'platform', 'created'],
            all.map((t) => [t.id, said(t.owner), said(t.platform), new Date(t.createdAt).toISOString()]),
          ),
    );
    return 0;
  },
};

const show: Command = {
  path: ['tenants', 'show'],
  usage: '<tenant> [--audit <count>] [--json]',
  summary: "a tenant's statuses and its audit trail (keys, statuses, refused requests)",
  args: [TENANT_ARG],
  options: {
    audit: { type: 'string', value: '<count>', help: 'how many audit entries, newest first (default 20)' },
    ...JSON_OPTION,
  },
  async run(ctx, { values, args }) {
    const count = typeof values.audit === 'string' ? parseCount(values.audit, 'audit', 'tenants show', 10_000) : 20;
    const t = await tenants(ctx);
    const tenant = await t.get(args.tenant!);
    if (tenant === undefined) {
      ctx.print(ctx.json ? json(null) : `no tenant ${args.tenant}`);
      return 1;
    }
    const audit = await t.audit(tenant.id, count);
    const rows = audit.map((e) => [
      new Date(e.at).toISOString(),
      e.kind,
      e.actor,
      e.key,
      e.source,
      e.count > 1 ? `${e.detail} ×${e.count}` : e.detail,
    ]);
    ctx.print(
      ctx.json
        ? json({ tenant, audit })
        : `${shown(tenant)}\n\n${table(['at', 'what', 'who', 'key', 'source', 'detail'], rows)}`,
    );
    return 0;
  },
};

const status: Command = {
  path: ['tenants', 'status'],
  usage: '<tenant> <enable|disable> --as <owner|platform> --reason <text> [--json]',
  summary: "set the owner's or the platform's say on whether a tenant sends",
  description: [
    'A tenant sends only while both its owner and the platform have it enabled. The platform',
    "status is the operators'; the owner status is the tenant's own (an admin key sets it too).",
  ],
  args: [TENANT_ARG, { name: 'state', help: 'enable or disable' }],
  options: { ...STATUS_OPTIONS, ...JSON_OPTION },
  async run(ctx, { values, args }) {
    const change = statusChange(args.state, values, ctx.io.env, 'tenants status');
    const tenant = await (await tenants(ctx)).setStatus(args.tenant!, change);
    ctx.print(ctx.json ? json(tenant) : shown(tenant));
    return 0;
  },
};

const plan: Command = {
  path: ['tenants', 'plan'],
  usage: '<tenant> <plan|none> [--json]',
  summary: 'put a tenant on a plan (its hard caps per minute, hour, day and month), or on none',
  description: [
    "The plan is one of the config's `plans`: its caps count every message of the tenant, and",
    'its key caps every message sent with one key, in UTC windows, at admission; at a cap the',
    'plan holds the mail until the window ends, or also refuses new mail over HTTP (429).',
  ],
  args: [TENANT_ARG, { name: 'plan', help: "one of the config's plans, or none" }],
  options: { ...ACTOR_OPTION, ...JSON_OPTION },
  async run(ctx, { values, args }) {
    const actor = actorOf(values.actor, ctx.io.env, 'tenants plan');
    const name = args.plan === 'none' ? undefined : args.plan;
    const tenant = await (await tenants(ctx)).setPlan(args.tenant!, name, { actor, knownPlans: await knownPlans(ctx) });
    ctx.print(ctx.json ? json(tenant) : shown(tenant));
    return 0;
  },
};

/** `sluice tenants …`. */
export const tenantCommands: readonly Command[] = [create, list, show, status, plan];
