// Generated pages are formatted as Prettier formats every other file (`npm run check:format`).
import { join } from 'node:path';
import prettier from 'prettier';
import { ROOT } from './markdown.js';

/** `text` as Prettier writes the file at `path` (repository-relative), with the repository's options. */
export async function format(path: string, text: string): Promise<string> {
  const file = join(ROOT, path);
  const options = (await prettier.resolveConfig(file)) ?? {};
  return prettier.format(text, { ...options, filepath: file });
}
