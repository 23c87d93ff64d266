/**
 * Issue 28 item 1, "Done when": one shift (shift.ts), checked as a person reads it, on every
 * surface; one file per surface (golden-shift-*.test.ts) so the suite's workers play them
 * side by side. Here the console, and the CLI commands people ran (console.txt, cli.txt).
 */
import { describe, expect, it } from 'vitest';
import { checkGolden } from './golden-file.js';
import { expectNoChange } from './expect-no-change.js';
import { playShift } from './shift.js';

describe('the golden shift, as people read it', () => {
  it('console: what the bot prints, and the CLI commands people ran with their human output', { timeout: 120_000 }, async () => {
    const shift = await playShift('console');
    expectNoChange([checkGolden('console.txt', shift.chat), checkGolden('cli.txt', shift.cli)]);
    // Whatever the golden files say: the duration counts from the alert's startsAt (03:00 → 03:21,
    // heard of at 03:07), and nothing shows a visible escape of an invisible character.
    expect(shift.chat).toContain('resolved after 21 min');
    expect(shift.chat).not.toContain('\\u{');
  });
});
