import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { format } from './reference/format.js';
import { ROOT } from './reference/markdown.js';
import { referencePages } from './reference/pages.js';

// The reference pages are generated from the code (config schema, error codes, CLI, metrics)
// and checked in: a change to the code that changes a page without regenerating it fails here.
describe('docs/reference', () => {
  it('is what the code generates (run `npm run docs:reference` after changing the config schema, an error code, a command or a metric)', async () => {
    const stale: string[] = [];
    for (const [path, text] of await referencePages()) {
      let checkedIn = '';
      try {
        checkedIn = readFileSync(join(ROOT, path), 'utf8');
      } catch {
        // A missing page is stale too.
      }
      if (checkedIn !== (await format(path, text))) stale.push(path);
    }
    expect(stale, `stale: ${stale.join(', ')}: run \`npm run docs:reference\``).toEqual([]);
  }, 60_000);
});
