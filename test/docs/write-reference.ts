// `npm run docs:reference`: writes the generated reference pages (docs/reference/), formatted
// as Prettier formats them, so the checked-in pages are what this writes.
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { format } from './reference/format.js';
import { ROOT } from './reference/markdown.js';
import { referencePages } from './reference/pages.js';

for (const [path, text] of await referencePages()) {
  mkdirSync(dirname(join(ROOT, path)), { recursive: true });
  writeFileSync(join(ROOT, path), await format(path, text));
  console.log(`wrote ${path}`);
}
