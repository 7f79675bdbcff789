/** A cell of a table: numbers are right-aligned, absent values print as `-`. */
export type Cell = string | number | undefined | null;

/**
 * Columns padded to their widest cell, headed by upper-case titles, two spaces apart. An
 * empty table prints `(none)`, so a section is never silently missing.
 */
export function table(headers: readonly string[], rows: readonly (readonly Cell[])[]): string {
  if (rows.length === 0) return '(none)';
  const text = rows.map((row) => headers.map((_, i) => cell(row[i])));
  const numeric = headers.map(
    (_, i) =>
      rows.some((row) => typeof row[i] === 'number') &&
      rows.every((row) => typeof row[i] === 'number' || row[i] === undefined || row[i] === null),
  );
  const widths = headers.map((h, i) => Math.max(h.length, ...text.map((r) => r[i]!.length)));
  const line = (cells: readonly string[]): string =>
    cells
      .map((c, i) =>
        i === cells.length - 1 && !numeric[i] ? c : numeric[i] ? c.padStart(widths[i]!) : c.padEnd(widths[i]!),
      )
      .join('  ')
      .trimEnd();
  return [line(headers.map((h) => h.toUpperCase())), ...text.map(line)].join('\n');
}

function cell(value: Cell): string {
  if (value === undefined || value === null || value === '') return '-';
  if (typeof value === 'number') return Number.isInteger(value) ? String(value) : value.toFixed(value < 10 ? 2 : 1);
  return value.replace(/\s+/g, ' ');
}

/** `label  value` lines, labels padded to the widest. */
export function fields(pairs: readonly (readonly [string, Cell])[]): string {
  const width = Math.max(...pairs.map(([k]) => k.length));
  return pairs.map(([k, v]) => `${k.padEnd(width)}  ${cell(v)}`).join('\n');
}

/** A span of time a person reads at a glance: `850ms`, `42s`, `12m`, `3h05m`, `2d4h`. */
export function duration(ms: number): string {
  const abs = Math.abs(ms);
  if (abs < 1_000) return `${Math.round(abs)}ms`;
  if (abs < 60_000) return `${Math.round(abs / 1_000)}s`;
  if (abs < 3_600_000) return `${Math.floor(abs / 60_000)}m${pad(Math.floor((abs % 60_000) / 1_000))}s`;
  if (abs < 86_400_000) return `${Math.floor(abs / 3_600_000)}h${pad(Math.floor((abs % 3_600_000) / 60_000))}m`;
  return `${Math.floor(abs / 86_400_000)}d${Math.floor((abs % 86_400_000) / 3_600_000)}h`;
}

const pad = (n: number): string => String(n).padStart(2, '0');

/** An instant as ISO time (seconds) with how far it is from now: `2026-11-30T16:00:00Z (in 9m59s)`. */
export function when(at: number | undefined, now: number): string | undefined {
  if (at === undefined || !Number.isFinite(at)) return undefined;
  const iso = new Date(at).toISOString().replace(/\.\d{3}Z$/, 'Z');
  const delta = at - now;
  return `${iso} (${delta >= 0 ? `in ${duration(delta)}` : `${duration(delta)} ago`})`;
}

/** A rate in messages per second. */
export function rate(value: number | undefined): string | undefined {
  if (value === undefined) return undefined;
  return `${Number.isInteger(value) ? value : value.toFixed(value < 10 ? 2 : 1)}/s`;
}

/** JSON for scripts: stable, indented, newline-terminated by the caller. */
export function json(value: unknown): string {
  return JSON.stringify(value, null, 2);
}
