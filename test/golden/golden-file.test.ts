/**
 * The golden check can fail, and says how: a deliberate change to a card's wording (the state
 * line of the first resolve, as the Slack renderer shows it) is a failure whose message is a
 * readable line diff naming the file and how to accept the change. Also the renderers the golden
 * files rely on: Slack mrkdwn and blocks as a client shows them, Matrix HTML as text.
 */
import { describe, expect, it } from 'vitest';
import { renderCard } from '../../src/adapters/slack/render-slack-card.js';
import type { CardView } from '../../src/core/chat/thread-view.js';
import { checkGolden, lineDiff, readGolden } from './golden-file.js';
import { matrixHtmlText } from './matrix-text.js';
import { mrkdwnToText, slackMessageText } from './slack-text.js';

const USERS = { U0ANN: 'ann' };

describe('golden files', () => {
  it('a deliberate wording change on a card fails the golden check with a readable diff', () => {
    const golden = readGolden('slack.txt');
    expect(golden, 'test/golden/slack.txt is committed').toBeDefined();
    const line = golden!.split('\n').find((l) => /✅ Resolved — /.test(l));
    expect(line, 'the golden Slack shift shows a resolved card').toBeDefined();
    const mutated = golden!.replace(line!, line!.replace('✅ Resolved — ', '✅ Cleared — '));
    const problem = checkGolden('slack.txt', mutated, { update: false });
    expect(problem).toBeDefined();
    expect(problem).toContain('what people read changed from test/golden/slack.txt (- golden, + now):');
    expect(problem).toContain(`- ${line}`);
    expect(problem).toContain(`+ ${line!.replace('✅ Resolved — ', '✅ Cleared — ')}`);
    expect(problem).toMatch(/@@ line \d+/);
    expect(problem).toContain('npm run golden -- --update');
    // The unchanged text passes.
    expect(checkGolden('slack.txt', golden!, { update: false })).toBeUndefined();
  });

  it('a changed render of a real card is a diff of exactly the changed line', () => {
    const card: CardView = {
      kind: 'card',
      triggerKey: 'k',
      alertname: 'KubePodCrashLooping',
      where: 'prod-eu-1/logging/log-router',
      severity: 'warning',
      state: 'resolved',
      stateNote: 'resolved after 21 min',
      verdict: 'inconclusive',
      headline: { answer: 'none' },
      links: [],
      controlsId: 'c1',
      controls: true,
      mentions: [],
    };
    const before = slackMessageText(renderCard(card), USERS);
    const after = slackMessageText(renderCard({ ...card, stateNote: 'resolved after 14 min' }), USERS);
    const diff = lineDiff(before, after, 0).split('\n');
    expect(diff.filter((l) => l.startsWith('- ') || l.startsWith('+ '))).toEqual([
      expect.stringMatching(/^- .*resolved after 21 min$/),
      expect.stringMatching(/^\+ .*resolved after 14 min$/),
    ]);
    expect(lineDiff(before, before)).toBe('');
  });

  it('a missing golden file says how to make one', () => {
    expect(checkGolden('no-such-surface.txt', 'x', { update: false })).toMatch(/does not exist yet: run `npm run golden -- --update`/);
  });
});

describe('what a Slack client shows', () => {
  it('decodes mrkdwn as Slack does: mentions as names, broadcasts, links, entities; a backslash stays visible', () => {
    expect(
      mrkdwnToText(
        '<@U0ANN> and <@U0EVE> <!channel> <!subteam^S1|@oncall> <https://x.example/a|the doc> <https://y.example> a &lt;b&gt; &amp; LOG\\_LEVEL',
        USERS,
      ),
    ).toBe('@ann and @U0EVE @channel @@oncall the doc <https://x.example/a> https://y.example a <b> & LOG\\_LEVEL');
  });

  it('renders rich text literally: code marked, mentions as names, lists and preformatted blocks', () => {
    const m = {
      text: 'fallback',
      blocks: [
        { type: 'header', text: { type: 'plain_text', text: 'Title *not bold*' } },
        {
          type: 'rich_text',
          elements: [
            {
              type: 'rich_text_section',
              elements: [
                { type: 'text', text: 'run ' },
                { type: 'text', text: 'df -h', style: { code: true } },
                { type: 'text', text: ' by ' },
                { type: 'user', user_id: 'U0ANN' },
              ],
            },
            { type: 'rich_text_list', style: 'bullet', elements: [{ type: 'rich_text_section', elements: [{ type: 'text', text: '<!channel> stays text' }] }] },
            { type: 'rich_text_preformatted', elements: [{ type: 'text', text: 'kubectl get pods' }] },
          ],
        },
        { type: 'context', elements: [{ type: 'mrkdwn', text: '<@U0ANN> is on it' }] },
        { type: 'actions', elements: [{ type: 'button', text: { type: 'plain_text', text: '👍 Accurate' } }] },
      ],
    };
    expect(slackMessageText(m, USERS)).toBe(
      ['Title *not bold*', 'run `df -h` by @ann', '• <!channel> stays text', '```', 'kubectl get pods', '```', '@ann is on it', '[👍 Accurate]'].join('\n'),
    );
    expect(slackMessageText({ text: 'plain <@U0ANN>' }, USERS)).toBe('plain @ann');
  });
});

describe('what a Matrix client shows', () => {
  it('HTML as text: code in backticks, links with their target, escaped markup as characters', () => {
    expect(matrixHtmlText('<p>run <code>df -h</code> &lt;b&gt; <a href="https://x.example/">doc</a></p>').trim()).toBe(
      'run `df -h` <b> doc [https://x.example/]',
    );
  });
});
