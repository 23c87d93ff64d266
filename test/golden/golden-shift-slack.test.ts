/**
 * Issue 28 item 1, "Done when": one shift (shift.ts), checked as a person reads it, on every
 * surface; one file per surface (golden-shift-*.test.ts) so the suite's workers play them
 * side by side. Here Slack: the channel, and the `/ui` pages after the shift (slack.txt, ui.txt).
 */
import { describe, it } from 'vitest';
import { checkGolden } from './golden-file.js';
import { expectNoChange } from './expect-no-change.js';
import { playShift } from './shift.js';

describe('the golden shift, as people read it', () => {
  it('Slack: the channel as a client shows it (blocks rendered, mentions as names), and /ui after the shift', { timeout: 120_000 }, async () => {
    const shift = await playShift('slack');
    expectNoChange([checkGolden('slack.txt', shift.chat), checkGolden('ui.txt', shift.ui ?? '')]);
  });
});
