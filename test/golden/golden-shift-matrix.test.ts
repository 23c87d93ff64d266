/**
 * Issue 28 item 1, "Done when": one shift (shift.ts), checked as a person reads it, on every
 * surface; one file per surface (golden-shift-*.test.ts) so the suite's workers play them
 * side by side. Here Matrix: every message as a client renders it (matrix.txt).
 */
import { describe, expect, it } from 'vitest';
import { checkGolden } from './golden-file.js';
import { expectNoChange } from './expect-no-change.js';
import { playShift } from './shift.js';

describe('the golden shift, as people read it', () => {
  it('Matrix: formatted_body (as HTML renders) and body of every message', { timeout: 120_000 }, async () => {
    const shift = await playShift('matrix');
    expectNoChange([checkGolden('matrix.txt', shift.chat)]);
    // People by their profile display names, as a Matrix client shows them — never a raw id where a name belongs.
    // (Only the steps' own lines — what people typed — carry an id.)
    expect(shift.chat).toContain('👀 Ann Example is on it');
    const shown = shift.chat.split('\n').filter((l) => l.startsWith('  │'));
    expect(shown.filter((l) => /@(?:ann|bob):fake\.test/.test(l))).toEqual([]);
  });
});
