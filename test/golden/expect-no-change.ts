/**
 * The golden shift's one assertion, shared by its per-surface files (one file each, so vitest's
 * workers play the surfaces side by side): fails with the golden files' own diffs, not a diff of
 * them against nothing.
 */
import { expect } from 'vitest';

export function expectNoChange(problems: Array<string | undefined>): void {
  const found = problems.filter((p): p is string => p !== undefined);
  // Joined, so a failure prints the golden files' own readable diffs.
  expect(found.join('\n\n')).toBe('');
}
