import { describe, expect, it } from 'vitest';
import { mdCode, mdCodeBlock, mdLine, mdLink, mdMention, mdText } from '../../../../src/adapters/mattermost/mattermost-markdown.js';
import {
  CONTROLS_HINT,
  fit,
  POST_BUDGET_CHARS,
  renderCard,
  renderDetail,
  renderEphemeral,
  renderReply,
} from '../../../../src/adapters/mattermost/render-mattermost.js';
import { card, detail } from '../matrix/views.js';

/** Text an attacker controls, in every markdown and mention form Mattermost knows. */
const HOSTILE = [
  '@channel @here @all @alice wake up <!channel>',
  '# heading',
  '| a | b |',
  '|---|---|',
  '```',
  '    indented code',
  '> quote',
  '- item',
  '![pixel](https://evil.example/p.png) [click](https://evil.example/) <https://evil.example/> https://evil.example/raw www.evil.example mail@evil.example',
  '**bold** _em_ ~~strike~~ `code` :fire: &amp; <script>alert(1)</script>',
  'gpj.\u202Eexe',
].join('\n');

/** Code as the client shows it: literal, never linked (fenced blocks and spans taken out). */
const outsideCode = (text: string): string => text.replace(/^(`{3,})\n[\s\S]*?\n\1$/gm, '').replace(/(?<!\\)(`+) [\s\S]*? \1/g, '');
/**
 * Every mention the server would notify for: `@word` in the message's text, with markdown's
 * backslash escapes taken as text (the server reads text nodes after markdown; code is skipped).
 */
const mentions = (text: string): string[] =>
  [
    ...outsideCode(text)
      .replace(/\\(?=[!-/:-@[-`{-~])/g, '')
      .matchAll(/\B@([a-z0-9][a-z0-9._-]*)/gi),
  ].map((m) => m[1]!.toLowerCase());
/** Markdown links and images, and bare URLs a client would link, outside code. */
const links = (text: string): string[] =>
  [...outsideCode(text).matchAll(/(?<!\\)\]\((\S+?)\)|(?<![\\[])\bhttps?:\/\/\S+|\bwww\.\S+/g)].map((m) => m[1] ?? m[0]);

/** Markup at the start of a line that is not the renderer's own. */
function assertNoBlockMarkup(text: string): void {
  for (const line of text.split('\n')) {
    expect(line, line).not.toMatch(/^(#|\||>|- |\d+\. |```| {4})/);
  }
}

describe('mattermost markdown neutralisation', () => {
  it('escapes every markdown character so the text renders as typed', () => {
    expect(mdLine('**bold** [x](y) #1 a|b')).toBe('\\*\\*bold\\*\\* \\[x\\]\\(y\\) \\#1 a\\|b');
    expect(mdText('# h\n    code\n> q')).toBe('\\# h\ncode\n\\> q');
    // A run that follows other text keeps one leading space; never four (an indented code block).
    expect(mdText('    (the Events section)')).toBe(' \\(the Events section\\)');
  });

  it('never mentions: @channel, @here, @all and @user become ＠, which the server does not read as a mention', () => {
    const out = mdText(HOSTILE);
    expect(mentions(out)).toEqual([]);
    expect(out).toContain('＠channel ＠here ＠all ＠alice');
    expect(mentions(mdCode('@channel'))).toEqual([]);
    // Code stays as typed (a command must copy and paste), and is never linked by the client.
    expect(mdCode('curl https://x.example/')).toBe('` curl https://x.example/ `');
    expect(links(mdCode('curl https://x.example/'))).toEqual([]);
    // In code `@` stays as typed: the server never reads code for mentions.
    expect(mdCode('@reprise fixed: …')).toBe('` @reprise fixed: … `');
    expect(mdCodeBlock('ssh @all')).toEqual(['```', 'ssh @all', '```']);
  });

  it('makes no link or image from text: markdown links escaped, bare URLs defanged', () => {
    const out = mdText(HOSTILE);
    expect(links(out)).toEqual([]);
    expect(out).toContain('https\\[\\:\\]//evil\\.example/raw');
    expect(out).toContain('www\\[\\.\\]evil\\.example');
    expect(out).not.toMatch(/(?<!\\)!\[/);
  });

  it('starts no block (heading, table, quote, list, fence, indented code) from text', () => {
    assertNoBlockMarkup(mdText(HOSTILE));
  });

  it('shows invisible and bidi characters as escapes', () => {
    expect(mdLine('gpj.\u202Eexe')).toContain('\\\\u\\{202E\\}');
    expect(mdLine('a\nb')).not.toContain('\n');
  });

  it('keeps a code span closed whatever backticks the code holds', () => {
    expect(mdCode('a ` b `` c')).toBe('``` a ` b `` c ```');
    const block = mdCodeBlock('echo ```\nrm -rf /');
    expect(block[0]).toBe('````');
    expect(block.at(-1)).toBe('````');
  });

  it('links only to http(s) URLs it was given, with the label escaped', () => {
    expect(mdLink('runbook [x]', 'https://runbooks.example/a b(c)')).toBe('[runbook \\[x\\]](https://runbooks.example/a%20b%28c%29)');
    expect(mdLink('x', 'javascript:alert(1)')).not.toContain('](');
  });

  it('mentions only configured names, never a group mention', () => {
    expect(mdMention('oncall')).toBe('@oncall');
    expect(mdMention('@alice.b')).toBe('@alice.b');
    for (const bad of ['channel', '@here', 'ALL', 'a b', '@x](https://evil)', '']) expect(mdMention(bad)).toBeUndefined();
  });
});

describe('render-mattermost', () => {
  it('renders the card from the view: alert, where, answer, links, controls', () => {
    const out = renderCard(card());
    expect(out).toContain('**KubePodCrashLooping**');
    expect(out).toContain('⚡ Instant recall');
    expect(out).toContain('[runbook](https://runbooks.example/checkout-oom)');
    expect(out).toContain(CONTROLS_HINT);
  });

  it('keeps hostile alert text inert on the card, in the detail and in notices', () => {
    const c = renderCard(
      card({ alertname: '@channel', where: '@here', said: { summary: HOSTILE, description: HOSTILE, value: '@all' }, stateNote: HOSTILE, ack: HOSTILE }),
    );
    const d = renderDetail(detail({ facts: [['alert', HOSTILE]], labels: [['summary', HOSTILE]], footer: HOSTILE }));
    const n = renderReply({
      kind: 'notice',
      topic: 'note',
      icon: '📝',
      text: [HOSTILE, { code: HOSTILE }, { strong: HOSTILE }, { person: { id: 'U1', name: '@channel', via: 'slack' } }],
    });
    const e = renderEphemeral({ kind: 'ephemeral', title: HOSTILE, body: [[HOSTILE]] });
    for (const out of [c, d, n, e]) {
      expect(mentions(out)).toEqual([]);
      expect(links(out).filter((l) => l.includes('evil'))).toEqual([]);
    }
    assertNoBlockMarkup(c);
    assertNoBlockMarkup(n);
  });

  it('pings the owners a routing rule names, and no group however it is configured', () => {
    const out = renderCard(card({ mentions: ['oncall', '@alice', 'channel', '@all'] }));
    expect(mentions(out)).toEqual(['oncall', 'alice']);
  });

  it('cuts a post that would pass the server limit, closing an open code block', () => {
    const huge = detail({
      sections: [
        {
          kind: 'runbook',
          title: 't',
          entry: 'e',
          confidence: 0.5,
          track: '',
          steps: Array.from({ length: 100 }, () => ({ text: ['step'], code: 'x'.repeat(3000) })),
        },
      ],
    });
    const out = renderDetail(huge);
    expect(out.length).toBeLessThanOrEqual(POST_BUDGET_CHARS);
    expect(out).toContain('cut to fit');
    expect((out.match(/^```$/gm) ?? []).length % 2).toBe(0);
    expect(fit(['a', 'b'])).toBe('a\nb');
  });

  it('the on-call line mentions the person by username, names anyone without one as text, and says why when unknown', () => {
    const line = (m: string): string => m.split('\n').find((l) => l.includes('on call'))!;
    const known = renderCard({
      ...card(),
      onCall: {
        people: [{ name: 'Ann', id: 'ann' }, { name: '@channel Cy', id: '@all' }, { name: '@here Dee' }],
        detail: 'rotation · until 09:00 UTC',
      },
    });
    expect(mentions(line(known))).toEqual(['ann']);
    expect(line(known).replace(/\\/g, '')).toContain('📟 on call: @ann, ');
    const unknown = renderCard({ ...card(), onCall: { people: [], detail: 'PagerDuty', unknown: 'PagerDuty answered 500 <!here>' } });
    expect(line(unknown).replace(/\\/g, '')).toContain('on call: unknown (PagerDuty answered 500');
    expect(mentions(unknown)).toEqual([]);
    const reminder = renderReply({ kind: 'notice', topic: 'info', icon: '⏰', text: ['nobody has acknowledged after 10 min'], mentions: ['ann', '@channel'] });
    expect(mentions(reminder)).toEqual(['ann']);
  });
});
