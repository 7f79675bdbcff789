import { parseArgs } from 'node:util';

/**
 * A mistake in how the command was called: unknown option, missing argument, bad value.
 * The CLI prints it with a pointer to `--help` and exits 2, before touching Redis.
 */
export class UsageError extends Error {
  override readonly name = 'UsageError';
  constructor(
    message: string,
    /** The command it is about, e.g. `override set`, for the `--help` hint. */
    readonly command: string,
  ) {
    super(message);
  }
}

/** One option of a command. */
export interface OptionSpec {
  type: 'string' | 'boolean';
  short?: string;
  /** Placeholder shown in `--help` for a string option, e.g. `<duration>`. */
  value?: string;
  help: string;
}

/** One positional argument of a command. */
export interface ArgSpec {
  name: string;
  help: string;
  optional?: boolean;
}

/** What {@link parseCommandArgs} returns. */
export interface ParsedArgs {
  values: Record<string, string | boolean | undefined>;
  args: Record<string, string | undefined>;
}

/** Options every command takes. */
export const COMMON_OPTIONS: Record<string, OptionSpec> = {
  help: { type: 'boolean', short: 'h', help: 'show this help' },
};

/** `--actor`, on every command that changes something: who, for the audit trail ({@link actorOf}). */
export const ACTOR_OPTION: Record<string, OptionSpec> = {
  actor: { type: 'string', value: '<name>', help: 'who is doing this (default: $USER)' },
};

/** `--json`, on every command that prints data. */
export const JSON_OPTION: Record<string, OptionSpec> = {
  json: { type: 'boolean', help: 'print the result as JSON (for scripts)' },
};

/**
 * Parses a command's arguments with node:util `parseArgs`, in loose mode so that every
 * mistake gets a message naming the argument (strict mode's messages are about the parser).
 */
export function parseCommandArgs(
  command: string,
  argv: readonly string[],
  options: Record<string, OptionSpec>,
  args: readonly ArgSpec[],
): ParsedArgs {
  const config: Record<string, { type: 'string' | 'boolean'; short?: string }> = {};
  for (const [name, o] of Object.entries(options))
    config[name] = o.short ? { type: o.type, short: o.short } : { type: o.type };
  const { values, positionals, tokens } = parseArgs({
    args: [...argv],
    options: config,
    strict: false,
    allowPositionals: true,
    tokens: true,
  });
  for (const token of tokens) {
    if (token.kind !== 'option') continue;
    const spec = options[token.name];
    if (!spec) throw new UsageError(`unknown option ${token.rawName}`, command);
    if (spec.type === 'string' && token.value === undefined)
      throw new UsageError(`option --${token.name} needs a value (${spec.value ?? '<value>'})`, command);
    if (spec.type === 'boolean' && token.inlineValue)
      throw new UsageError(`option --${token.name} takes no value`, command);
  }
  const out: ParsedArgs = { values, args: {} };
  if (values.help === true) return out;
  args.forEach((spec, i) => {
    const value = positionals[i];
    if (value === undefined && !spec.optional) throw new UsageError(`missing argument <${spec.name}>`, command);
    out.args[spec.name] = value;
  });
  if (positionals.length > args.length)
    throw new UsageError(`unexpected argument ${JSON.stringify(positionals[args.length])}`, command);
  return out;
}

const UNITS: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** `90s`, `10m`, `2h`, `1d`, `1h30m` → milliseconds; throws a UsageError naming the option. */
export function parseDuration(text: string, option: string, command: string): number {
  const parts = /^(?:\d+(?:\.\d+)?(?:ms|s|m|h|d))+$/.test(text)
    ? [...text.matchAll(/(\d+(?:\.\d+)?)(ms|s|m|h|d)/g)]
    : [];
  const ms = parts.reduce((sum, m) => sum + Number(m[1]) * UNITS[m[2]!]!, 0);
  if (parts.length === 0 || !Number.isFinite(ms) || ms < 1) {
    throw new UsageError(
      `--${option} must be a duration such as 90s, 10m, 2h or 1d, got ${JSON.stringify(text)}`,
      command,
    );
  }
  return Math.round(ms);
}

/** An ISO 8601 time in the future → epoch ms. */
export function parseFutureTime(text: string, option: string, command: string, now: number): number {
  const at = /^\d{4}-\d{2}-\d{2}/.test(text) ? Date.parse(text) : NaN;
  if (Number.isNaN(at))
    throw new UsageError(
      `--${option} must be an ISO 8601 time such as 2026-12-01T09:00:00Z, got ${JSON.stringify(text)}`,
      command,
    );
  if (at <= now) throw new UsageError(`--${option} ${text} is not in the future`, command);
  return at;
}

/** A positive number (a rate). */
export function parsePositive(text: string, option: string, command: string): number {
  const n = /^\d+(\.\d+)?$/.test(text) ? Number(text) : NaN;
  if (!(n > 0) || !Number.isFinite(n))
    throw new UsageError(`--${option} must be a positive number, got ${JSON.stringify(text)}`, command);
  return n;
}

/** A whole number from 1 to `max`. */
export function parseCount(text: string, option: string, command: string, max: number): number {
  const n = /^\d+$/.test(text) ? Number(text) : NaN;
  if (!Number.isInteger(n) || n < 1 || n > max)
    throw new UsageError(`--${option} must be a whole number from 1 to ${max}, got ${JSON.stringify(text)}`, command);
  return n;
}

/** A non-empty `--reason`: every change an operator makes says why. */
export function requireText(value: string | boolean | undefined, option: string, command: string): string {
  if (typeof value !== 'string' || value.trim() === '')
    throw new UsageError(`--${option} is required (say why)`, command);
  return value.trim();
}

/** `--actor`, else `$USER` (or `$LOGNAME`): every change says who made it. */
export function actorOf(value: string | boolean | undefined, env: NodeJS.ProcessEnv, command: string): string {
  const actor = typeof value === 'string' ? value.trim() : (env.USER ?? env.LOGNAME ?? '').trim();
  if (actor === '') throw new UsageError('--actor is required when $USER is not set (who is doing this?)', command);
  return actor;
}

/** The options of a status command (`tenants status`, `keys status`). */
export const STATUS_OPTIONS: Record<string, OptionSpec> = {
  as: { type: 'string', value: '<owner|platform>', help: 'whose status it is (required)' },
  reason: { type: 'string', value: '<text>', help: 'why (required; kept in the audit trail)' },
  ...ACTOR_OPTION,
};

/** A status command's `<enable|disable>`, `--as`, `--reason` and actor; a UsageError naming what is wrong. */
export function statusChange(
  state: string | undefined,
  values: ParsedArgs['values'],
  env: NodeJS.ProcessEnv,
  command: string,
): { party: 'owner' | 'platform'; enabled: boolean; reason: string; actor: string } {
  if (state !== 'enable' && state !== 'disable') {
    throw new UsageError(`<state> must be enable or disable, got ${JSON.stringify(state)}`, command);
  }
  if (values.as !== 'owner' && values.as !== 'platform')
    throw new UsageError('--as must be owner or platform', command);
  const reason = requireText(values.reason, 'reason', command);
  return { party: values.as, enabled: state === 'enable', reason, actor: actorOf(values.actor, env, command) };
}
