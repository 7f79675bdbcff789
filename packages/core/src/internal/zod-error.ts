import type { z } from 'zod';

/** Renders a path like `messages.3.headers.X-Foo`, or `(root)` for the top. */
export function formatPath(path: readonly PropertyKey[]): string {
  return path.length === 0 ? '(root)' : path.map(String).join('.');
}

/** The first issue of a zod error as `path: message`, plus its path. */
export function describeZodError(
  error: z.ZodError,
  prefix: readonly PropertyKey[] = [],
): { text: string; path: string } {
  const issue = error.issues[0];
  const path = formatPath([...prefix, ...(issue?.path ?? [])]);
  const more = error.issues.length > 1 ? ` (and ${error.issues.length - 1} more)` : '';
  return { text: `${path}: ${issue?.message ?? 'invalid'}${more}`, path };
}
