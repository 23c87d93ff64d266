/**
 * No file in src/ grows past 450 lines without saying why (issue 30): its opening comment holds
 * "Over 450 lines" and the reason, so the next engineer can judge whether it still holds.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const SRC = fileURLToPath(new URL('../../src', import.meta.url));
const LIMIT = 450;

/** The file's opening doc comment, or '' when it has none. */
function openingComment(text: string): string {
  const m = /^\s*\/\*\*([\s\S]*?)\*\//.exec(text);
  return m?.[1] ?? '';
}

describe('file size', () => {
  it('finds the opening comment it reads', () => {
    expect(openingComment('/**\n * Over 450 lines on purpose: x.\n */\nimport a;')).toMatch(/Over 450 lines/);
    expect(openingComment('import a;\n/** Over 450 lines */')).toBe('');
  });

  it(`gives every src file over ${LIMIT} lines its reason at the top`, () => {
    const files = readdirSync(SRC, { recursive: true, withFileTypes: true }).filter((d) => d.isFile() && d.name.endsWith('.ts'));
    expect(files.length).toBeGreaterThan(100);
    const unexplained = files
      .map((d) => join(d.parentPath, d.name))
      .filter((f) => {
        const text = readFileSync(f, 'utf8');
        return text.split('\n').length > LIMIT && !/Over 450 lines/.test(openingComment(text));
      })
      .map((f) => relative(SRC, f));
    expect(unexplained).toEqual([]);
  });
});
