import type { z } from 'zod';
import { SluiceError, type SluiceErrorCode } from './errors.js';

/**
 * One part of a path as a reader can see it: as it is, unless it is empty or has a dot,
 * a space, a quote or a control character, which are shown JSON-quoted (`headers."a.b"`).
 */
function pathPart(part: PropertyKey): string {
  const s = String(part);
  return s === '' || /[.\s"'\u0000-\u001F\u007F-\u009F\u2028\u2029]/.test(s) ? JSON.stringify(s) : s;
}

/** Renders a path like `messages.3.headers.X-Foo`, or `(root)` for the top. */
export function formatPath(path: readonly PropertyKey[]): string {
  return path.length === 0 ? '(root)' : path.map(pathPart).join('.');
}

/**
 * Validates input against a schema, or throws a `SluiceError` with `code` whose message
 * reads `invalid <what>: <path>: <problem>` and whose `path` names the first bad field
 * (after `pathPrefix`, as in `messages.3.to`).
 */
export function parseInput<S extends z.ZodType>(
  schema: S,
  input: unknown,
  failure: { code: SluiceErrorCode; what: string; pathPrefix?: readonly PropertyKey[] },
): z.output<S> {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  let at = issue?.path ?? [];
  let problem = issue?.message ?? 'invalid';
  // zod reports an unknown key on its parent object; naming the key itself is what a reader needs.
  if (issue?.code === 'unrecognized_keys' && issue.keys[0] !== undefined) {
    at = [...at, issue.keys[0]];
    problem = 'unknown key';
  }
  const path = formatPath([...(failure.pathPrefix ?? []), ...at]);
  const more = result.error.issues.length > 1 ? ` (and ${result.error.issues.length - 1} more)` : '';
  throw new SluiceError(failure.code, `invalid ${failure.what}: ${path}: ${problem}${more}`, {
    path,
    cause: result.error,
  });
}
