/**
 * Issue 28 item 1, "Done when": one shift (shift.ts), checked as a person reads it, on every
 * surface; one file per surface (golden-shift-*.test.ts) so the suite's workers play them
 * side by side. Here Slack: the channel, and the `/ui` pages after the shift (slack.txt, ui.txt).
 */
import { describe, expect, it } from 'vitest';
import { checkGolden } from './golden-file.js';
import { expectNoChange } from './expect-no-change.js';
import { playShift } from './shift.js';

describe('the golden shift, as people read it', () => {
  it('Slack: the channel as a client shows it (blocks rendered, mentions as names), and /ui after the shift', { timeout: 120_000 }, async () => {
    const shift = await playShift('slack');
    expectNoChange([checkGolden('slack.txt', shift.chat), checkGolden('ui.txt', shift.ui ?? '')]);
    // Whatever the golden files say: the duration counts from the alert's startsAt (03:00 → 03:21,
    // heard of at 03:07), and no raw Slack id is shown where a client shows a name.
    expect(shift.chat).toContain('✅ resolved after 21 min');
    const shown = shift.chat.split('\n').filter((l) => l.startsWith('  │'));
    expect(shown.filter((l) => /\bU0(?:ANN|BOB)\b/.test(l))).toEqual([]);
  });
});
