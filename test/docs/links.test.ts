import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from './reference/markdown.js';

/** Every Markdown page under docs/. */
function pages(): string[] {
  return readdirSync(join(ROOT, 'docs'), { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.md'))
    .map((f) => join('docs', f).split('\\').join('/'));
}

/** The relative links of a Markdown file (`[text](target)`), fences left out, anchors cut. */
function links(file: string): string[] {
  const text = readFileSync(join(ROOT, file), 'utf8').replace(/```[\s\S]*?```/g, '');
  return [...text.matchAll(/\]\(([^)\s]+)\)/g)]
    .map((m) => m[1]!)
    .filter((t) => !/^[a-z]+:/.test(t) && !t.startsWith('#'))
    .map((t) => t.split('#')[0]!);
}

/** A link's target, repository-relative. */
const target = (from: string, link: string): string => relative(ROOT, resolve(ROOT, dirname(from), link));

// The documents are read by following links from the README: a page no link reaches is not read,
// and a broken link is the first thing a reader meets.
describe('docs/', () => {
  it('has no broken relative link (README, CONTRIBUTING and every page)', () => {
    const broken = ['README.md', 'CONTRIBUTING.md', ...pages()].flatMap((file) =>
      links(file)
        .filter((link) => !existsSync(join(ROOT, target(file, link))))
        .map((link) => `${file} → ${link}`),
    );
    expect(broken).toEqual([]);
  });

  it('reaches every page from README.md in at most two links', () => {
    const reached = new Set<string>();
    let frontier = ['README.md'];
    for (let depth = 0; depth < 2; depth++) {
      const next: string[] = [];
      for (const file of frontier) {
        for (const link of links(file)) {
          const to = target(file, link);
          const path =
            existsSync(join(ROOT, to)) && statSync(join(ROOT, to)).isDirectory() ? join(to, 'README.md') : to;
          if (path.endsWith('.md') && !reached.has(path)) {
            reached.add(path);
            next.push(path);
          }
        }
      }
      frontier = next;
    }
    expect(pages().filter((p) => !reached.has(p))).toEqual([]);
  });
});
