/**
 * Issue 28 item 1, "Done when": one shift (shift.ts), checked as a person reads it, on every
 * surface; one file per surface (golden-shift-*.test.ts) so the suite's workers play them
 * side by side. Here Mattermost: every post, edit and ephemeral answer (mattermost.txt).
 */
import { describe, expect, it } from 'vitest';
import { checkGolden } from './golden-file.js';
import { expectNoChange } from './expect-no-change.js';
import { playShift } from './shift.js';

describe('the golden shift, as people read it', () => {
  it('Mattermost: every post, edit and ephemeral answer as the client renders its markdown', { timeout: 120_000 }, async () => {
    const shift = await playShift('mattermost');
    expectNoChange([checkGolden('mattermost.txt', shift.chat)]);
    // Whatever the golden files say: the duration counts from the alert's startsAt (03:00 → 03:21,
    // heard of at 03:07), and nothing shows a visible escape of an invisible character.
    expect(shift.chat).toContain('resolved after 21 min');
    expect(shift.chat).not.toContain('\\u{');
  });
});
