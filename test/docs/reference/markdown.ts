// What the generated reference pages share: where the repository is, and a Markdown table.
import { resolve } from 'node:path';

/** The repository's root. */
export const ROOT = resolve(import.meta.dirname, '../../..');

/** A cell's text with what would break a Markdown table row escaped. */
function cell(text: string): string {
  return text
    .replace(/\|/g, '\\|')
    .replace(/\\\\\|/g, '\\|')
    .replace(/\n/g, ' ');
}

/** A Markdown table: a header row and one row per item. */
export function table(header: string[], rows: string[][]): string {
  return [
    `| ${header.join(' | ')} |`,
    `| ${header.map(() => '---').join(' | ')} |`,
    ...rows.map((r) => `| ${r.map(cell).join(' | ')} |`),
  ].join('\n');
}
