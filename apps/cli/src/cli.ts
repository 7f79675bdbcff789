import { SluiceError } from '@sluice/core';
import { COMMON_OPTIONS, UsageError, parseCommandArgs, type OptionSpec } from './args.js';
import { campaignCommands } from './commands/campaigns.js';
import { injectCommands } from './commands/inject.js';
import { migrateCommands } from './commands/migrate.js';
import { explainCommands } from './commands/explain.js';
import { overrideCommands } from './commands/override.js';
import { replyCommands } from './commands/replies.js';
import { statusCommands } from './commands/status.js';
import { suppressionCommands } from './commands/suppressions.js';
import { keyCommands } from './commands/keys.js';
import { tenantCommands } from './commands/tenants.js';
import { createContext, type Command, type Io } from './context.js';

/** Every command, in the order `sluice --help` lists them. */
export const COMMANDS: readonly Command[] = [
  ...statusCommands,
  ...campaignCommands,
  ...injectCommands,
  ...overrideCommands,
  ...explainCommands,
  ...suppressionCommands,
  ...tenantCommands,
  ...keyCommands,
  ...replyCommands,
  ...migrateCommands,
];

/** Exit codes: done, failed (Redis, unknown id, …), called wrongly. */
export const EXIT = { ok: 0, failed: 1, usage: 2 } as const;

/** How the library's argument names read on the command line, for its error messages. */
const FLAG_OF_PATH: Record<string, string> = {
  address: '<address>',
  tenantId: '--tenant',
  reason: '--reason',
  actor: '--actor',
  rate: '--rate',
  forMs: '--for',
  untilMs: '--until',
  scope: '<scope>',
  name: '<name>',
  id: '<id>',
  campaignId: '<id>',
  count: '--count',
  limit: '--limit',
  receiver: '--receiver',
  scopes: '--scopes',
  expiresAt: '--expires',
  oldUntil: '--old-until',
  tenant: '<tenant>',
  key: '<id>',
};

function topHelp(): string {
  const width = Math.max(...COMMANDS.map((c) => c.path.join(' ').length));
  return [
    'Usage: sluice <command> [arguments] [options]',
    '',
    "Operate a Sluice fleet from a shell. Reads the fleet's config (SLUICE_CONFIG, else ./sluice.yaml)",
    'and REDIS_URL, and talks to Redis directly.',
    '',
    'Commands:',
    ...COMMANDS.map((c) => `  ${c.path.join(' ').padEnd(width)}  ${c.summary}`),
    '',
    'Run `sluice <command> --help` for its arguments and options. Every command that prints data',
    'takes --json. Exit codes: 0 done, 1 failed, 2 usage error.',
  ].join('\n');
}

function groupHelp(group: string): string {
  const commands = COMMANDS.filter((c) => c.path[0] === group);
  const width = Math.max(...commands.map((c) => c.path.join(' ').length));
  return [
    `Usage: sluice ${group} <${commands.map((c) => c.path[1]).join('|')}> [arguments] [options]`,
    '',
    'Commands:',
    ...commands.map((c) => `  ${c.path.join(' ').padEnd(width)}  ${c.summary}`),
    '',
    `Run \`sluice ${group} <command> --help\` for its arguments and options.`,
  ].join('\n');
}

function optionLabel(name: string, o: OptionSpec): string {
  return `${o.short ? `-${o.short}, ` : ''}--${name}${o.type === 'string' ? ` ${o.value ?? '<value>'}` : ''}`;
}

/** A command's `--help`. */
export function commandHelp(c: Command): string {
  const options = { ...c.options, ...COMMON_OPTIONS };
  const labels = [...c.args.map((a) => `<${a.name}>`), ...Object.entries(options).map(([n, o]) => optionLabel(n, o))];
  const width = Math.max(...labels.map((l) => l.length));
  const lines = [
    `Usage: sluice ${c.path.join(' ')} ${c.usage}`.trimEnd(),
    '',
    `${c.summary[0]!.toUpperCase()}${c.summary.slice(1)}.`,
  ];
  if (c.description) lines.push('', ...c.description);
  if (c.args.length > 0)
    lines.push('', 'Arguments:', ...c.args.map((a) => `  ${`<${a.name}>`.padEnd(width)}  ${a.help}`));
  lines.push(
    '',
    'Options:',
    ...Object.entries(options).map(([n, o]) => `  ${optionLabel(n, o).padEnd(width)}  ${o.help}`),
  );
  return lines.join('\n');
}

function describeError(err: unknown): { message: string; usage: boolean } {
  if (err instanceof SluiceError) {
    let message = err.message;
    const flag = err.path === undefined ? undefined : FLAG_OF_PATH[err.path];
    if (flag !== undefined && err.path !== undefined) message = message.replace(`${err.path}:`, `${flag}:`);
    return { message, usage: err.code === 'invalid_argument' };
  }
  return { message: err instanceof Error ? err.message : String(err), usage: false };
}

/**
 * Runs one `sluice` command line and returns its exit code. Usage errors are found before
 * Redis is touched, so a refused command writes nothing.
 */
export async function run(argv: readonly string[], io: Io): Promise<number> {
  const [first, second] = argv;
  if (first === undefined || first === 'help' || first === '--help' || first === '-h') {
    if (first === undefined) {
      io.stderr(`${topHelp()}\n`);
      return EXIT.usage;
    }
    io.stdout(`${topHelp()}\n`);
    return EXIT.ok;
  }
  let command = COMMANDS.find((c) => c.path.length === 1 && c.path[0] === first);
  let rest = argv.slice(1);
  if (!command) {
    const group = COMMANDS.filter((c) => c.path[0] === first);
    if (group.length === 0) {
      io.stderr(`sluice: unknown command ${JSON.stringify(first)}\nRun \`sluice --help\` for the commands.\n`);
      return EXIT.usage;
    }
    if (second === '--help' || second === '-h') {
      io.stdout(`${groupHelp(first)}\n`);
      return EXIT.ok;
    }
    command = group.find((c) => c.path[1] === second);
    if (!command) {
      const what =
        second === undefined
          ? `sluice ${first}: missing command`
          : `sluice ${first}: unknown command ${JSON.stringify(second)}`;
      io.stderr(`${what}\n\n${groupHelp(first)}\n`);
      return EXIT.usage;
    }
    rest = argv.slice(2);
  }
  const name = command.path.join(' ');
  const ctx = createContext(io, rest.includes('--json'));
  try {
    const parsed = parseCommandArgs(name, rest, { ...command.options, ...COMMON_OPTIONS }, command.args);
    if (parsed.values.help === true) {
      io.stdout(`${commandHelp(command)}\n`);
      return EXIT.ok;
    }
    ctx.json = parsed.values.json === true;
    return await command.run(ctx, parsed);
  } catch (err) {
    if (err instanceof UsageError) {
      io.stderr(`sluice ${name}: ${err.message}\nRun \`sluice ${name} --help\` for usage.\n`);
      return EXIT.usage;
    }
    const { message, usage } = describeError(err);
    io.stderr(`sluice ${name}: ${message}\n${usage ? `Run \`sluice ${name} --help\` for usage.\n` : ''}`);
    return usage ? EXIT.usage : EXIT.failed;
  } finally {
    await ctx.close();
  }
}
