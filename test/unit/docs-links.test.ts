/**
 * The docs hold together: every relative link in the README and docs/ points at a file that
 * exists, and every `#anchor` into a Markdown file names one of its headings.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');
const files = [
  'README.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens. */
function anchors(markdown: string): Set<string> {
  const out = new Set<string>();
  for (const m of markdown.matchAll(/^#{1,6}\s+(.+)$/gm)) {
    out.add(
      m[1]!
        .trim()
        .toLowerCase()
        .replace(/[^\p{L}\p{N}\s_-]/gu, '')
        .replace(/\s/g, '-'),
    );
  }
  return out;
}

/** Markdown links outside code blocks: [text](target). */
function links(markdown: string): string[] {
  const prose = markdown.replace(/```[\s\S]*?```/g, '');
  return [...prose.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1]!);
}

describe('documentation links', () => {
  it('finds the docs it checks', () => {
    expect(files).toEqual(expect.arrayContaining(['README.md', 'docs/README.md', 'docs/configuration.md', 'docs/security.md', 'docs/install.md']));
  });

  it.each(files)('%s: every relative link resolves', (file) => {
    const text = readFileSync(join(ROOT, file), 'utf8');
    const broken: string[] = [];
    for (const target of links(text)) {
      if (/^[a-z]+:/i.test(target)) continue; // http(s), mailto
      const [path, anchor] = target.split('#') as [string, string | undefined];
      const abs = path === '' ? join(ROOT, file) : resolve(dirname(join(ROOT, file)), path);
      if (!existsSync(abs)) {
        broken.push(`${target} (no such file)`);
        continue;
      }
      if (anchor && abs.endsWith('.md') && statSync(abs).isFile() && !anchors(readFileSync(abs, 'utf8')).has(anchor))
        broken.push(`${target} (no heading #${anchor})`);
    }
    expect(broken, `${file} has broken links`).toEqual([]);
  });
});
