/**
 * Golden files (issue 28 item 1): what people read, committed as text beside the test. A run
 * compares with them and fails with a line diff; `npm run golden -- --update` (which sets
 * REPRISE_GOLDEN_UPDATE=1) rewrites them instead, for a person to read in `git diff` before
 * committing.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const GOLDEN_DIR = dirname(fileURLToPath(import.meta.url));

export const updating = (): boolean => process.env['REPRISE_GOLDEN_UPDATE'] === '1';

/** The committed text of a golden file, or undefined when there is none yet. */
export function readGolden(name: string): string | undefined {
  const file = join(GOLDEN_DIR, name);
  return existsSync(file) ? readFileSync(file, 'utf8') : undefined;
}

/**
 * A line diff of `expected` → `actual` with `context` lines around each change: `-` what the
 * golden file says, `+` what people would read now, `@@ line N` where it starts. Empty when equal.
 */
export function lineDiff(expected: string, actual: string, context = 3): string {
  const a = expected.split('\n');
  const b = actual.split('\n');
  // Longest common subsequence table, from the end (the files are a few thousand lines at most).
  const lcs: number[][] = Array.from({ length: a.length + 1 }, () => new Array<number>(b.length + 1).fill(0));
  for (let i = a.length - 1; i >= 0; i--)
    for (let j = b.length - 1; j >= 0; j--) lcs[i]![j] = a[i] === b[j] ? lcs[i + 1]![j + 1]! + 1 : Math.max(lcs[i + 1]![j]!, lcs[i]![j + 1]!);
  const ops: Array<{ op: ' ' | '-' | '+'; line: string; at: number }> = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    if (i < a.length && j < b.length && a[i] === b[j]) ops.push({ op: ' ', line: a[i++]!, at: j++ });
    else if (i < a.length && (j === b.length || lcs[i + 1]![j]! >= lcs[i]![j + 1]!)) ops.push({ op: '-', line: a[i++]!, at: j });
    else ops.push({ op: '+', line: b[j]!, at: j++ });
  }
  const keep = ops.map((o, k) => o.op !== ' ' || ops.slice(Math.max(0, k - context), k + context + 1).some((x) => x.op !== ' '));
  const out: string[] = [];
  let gap = true;
  ops.forEach((o, k) => {
    if (!keep[k]) {
      gap = true;
      return;
    }
    if (gap) out.push(`@@ line ${o.at + 1}`);
    gap = false;
    out.push(`${o.op} ${o.line}`);
  });
  return out.join('\n');
}

/**
 * Compares `actual` with the golden file `name`. Returns why it differs (the diff and how to
 * accept it), or undefined when it matches. In update mode it writes the file and returns undefined.
 */
export function checkGolden(name: string, actual: string, o: { update?: boolean } = {}): string | undefined {
  if (o.update ?? updating()) {
    if (readGolden(name) !== actual) writeFileSync(join(GOLDEN_DIR, name), actual);
    return undefined;
  }
  const expected = readGolden(name);
  if (expected === undefined)
    return `test/golden/${name} does not exist yet: run \`npm run golden -- --update\`, read it as the on-call engineer would, and commit it`;
  if (expected === actual) return undefined;
  return [
    `what people read changed from test/golden/${name} (- golden, + now):`,
    lineDiff(expected, actual),
    `If the change is meant, run \`npm run golden -- --update\`, read the new file and commit it.`,
  ].join('\n');
}
