import { readFileSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from './reference/markdown.js';

/** Every `.ts` file under the `src` of each app and package. */
function sources(): string[] {
  return ['apps', 'packages'].flatMap((group) =>
    readdirSync(join(ROOT, group)).flatMap((name) => {
      const src = join(ROOT, group, name, 'src');
      try {
        return readdirSync(src, { recursive: true, encoding: 'utf8' })
          .filter((f) => f.endsWith('.ts'))
          .map((f) => join(src, f));
      } catch {
        return [];
      }
    }),
  );
}

// A caller reads docs/reference/errors.md to learn what a code means and what to do: a code the
// code throws that the page does not list leaves them guessing.
describe('docs/reference/errors.md', () => {
  it('lists every code a `new SluiceError(…)` in apps/*/src and packages/*/src throws', () => {
    const page = readFileSync(join(ROOT, 'docs/reference/errors.md'), 'utf8');
    const thrown = new Map<string, string>();
    for (const file of sources()) {
      for (const m of readFileSync(file, 'utf8').matchAll(/new SluiceError\(\s*'([a-z_]+)'/g)) {
        thrown.set(m[1]!, relative(ROOT, file));
      }
    }
    expect(thrown.size).toBeGreaterThan(10);
    const missing = [...thrown].filter(([code]) => !page.includes(`| \`${code}\``)).map(([c, f]) => `${c} (${f})`);
    expect(missing, 'codes thrown but not in docs/reference/errors.md (add them to ERROR_CODES)').toEqual([]);
  });
});
