/**
 * Issue 28 item 1, "Done when": one shift, checked as a person reads it, on every surface. The
 * shift (shift.ts) plays on Slack, Matrix and the console; what each shows, the CLI's human
 * output and the `/ui` pages are compared with the committed golden files in this folder.
 */
import { describe, expect, it } from 'vitest';
import { checkGolden } from './golden-file.js';
import { playShift } from './shift.js';

describe('the golden shift, as people read it', () => {
  it('Slack: the channel as a client shows it (blocks rendered, mentions as names), and /ui after the shift', { timeout: 120_000 }, async () => {
    const shift = await playShift('slack');
    const problems = [checkGolden('slack.txt', shift.chat), checkGolden('ui.txt', shift.ui ?? '')].filter(Boolean);
    expect(problems.join('\n\n'), problems.join('\n\n')).toBe('');
  });

  it('Matrix: formatted_body (as HTML renders) and body of every message', { timeout: 120_000 }, async () => {
    const shift = await playShift('matrix');
    const problems = [checkGolden('matrix.txt', shift.chat)].filter(Boolean);
    expect(problems.join('\n\n'), problems.join('\n\n')).toBe('');
  });

  it('console: what the bot prints, and the CLI commands people ran with their human output', { timeout: 120_000 }, async () => {
    const shift = await playShift('console');
    const problems = [checkGolden('console.txt', shift.chat), checkGolden('cli.txt', shift.cli)].filter(Boolean);
    expect(problems.join('\n\n'), problems.join('\n\n')).toBe('');
  });
});
