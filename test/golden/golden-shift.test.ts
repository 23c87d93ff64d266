/**
 * Issue 28 item 1, "Done when": one shift, checked as a person reads it, on every surface. The
 * shift (shift.ts) plays on Slack, Matrix, Mattermost and the console; what each shows, the CLI's human
 * output and the `/ui` pages are compared with the committed golden files in this folder.
 */
import { describe, expect, it } from 'vitest';
import { checkGolden } from './golden-file.js';
import { playShift } from './shift.js';

/** Fails with the golden files' own diffs (not a diff of them against nothing). */
function expectNoChange(problems: Array<string | undefined>): void {
  const found = problems.filter((p): p is string => p !== undefined);
  // Joined, so a failure prints the golden files' own readable diffs.
  expect(found.join('\n\n')).toBe('');
}

describe('the golden shift, as people read it', () => {
  it('Slack: the channel as a client shows it (blocks rendered, mentions as names), and /ui after the shift', { timeout: 120_000 }, async () => {
    const shift = await playShift('slack');
    expectNoChange([checkGolden('slack.txt', shift.chat), checkGolden('ui.txt', shift.ui ?? '')]);
  });

  it('Matrix: formatted_body (as HTML renders) and body of every message', { timeout: 120_000 }, async () => {
    const shift = await playShift('matrix');
    expectNoChange([checkGolden('matrix.txt', shift.chat)]);
    // People by their profile display names, as a Matrix client shows them — never a raw id where a name belongs.
    // (Only the steps' own lines — what people typed — carry an id.)
    expect(shift.chat).toContain('👀 Ann Example is on it');
    const shown = shift.chat.split('\n').filter((l) => l.startsWith('  │'));
    expect(shown.filter((l) => /@(?:ann|bob):fake\.test/.test(l))).toEqual([]);
  });

  it('Mattermost: every post, edit and ephemeral answer as the client renders its markdown', { timeout: 120_000 }, async () => {
    const shift = await playShift('mattermost');
    expectNoChange([checkGolden('mattermost.txt', shift.chat)]);
  });

  it('console: what the bot prints, and the CLI commands people ran with their human output', { timeout: 120_000 }, async () => {
    const shift = await playShift('console');
    expectNoChange([checkGolden('console.txt', shift.chat), checkGolden('cli.txt', shift.cli)]);
  });
});
