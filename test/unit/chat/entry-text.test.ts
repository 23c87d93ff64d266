/**
 * Issue 28 item 2: a recalled entry reads as rich text parsed from its markdown, never its
 * escaped source — the fix entry the curator writes (a quote, backslash escapes, word joiners,
 * a credit line) comes back as the person's words, code as code, the credit naming the person.
 */
import { describe, expect, it } from 'vitest';
import { renderFixEntry } from '../../../src/core/curate/fix-entry.js';
import { parseEntry } from '../../../src/core/catalog/parse-entry.js';
import { entryParagraphs, entrySection, plainText } from '../../../src/core/chat/entry-text.js';
import { inline, person } from '../../../src/adapters/slack/rich-text.js';
import { inline as matrixInline } from '../../../src/adapters/matrix/matrix-markup.js';

const inlineHtml = (runs: Parameters<typeof matrixInline>[0], max: number): string => matrixInline(runs, max).html;

const FIX = 'vacuumed the journal with `journalctl --vacuum-size=500M`, set LOG_LEVEL=info (see https://wiki.example.com/x), thanks @bob';

function fixEntrySections(text: string, via = 'slack', name = 'U0ANN'): Record<string, string> {
  const draft = renderFixEntry(
    {
      user: `${via}:${name}`,
      name,
      via,
      text,
      at: '2026-11-29T03:14:00Z',
      alert: { alertname: 'KubePodCrashLooping', title: 'Pod is crash looping.', resource: 'logging/log-router' },
      triedAndFailed: [],
    } as Parameters<typeof renderFixEntry>[0],
    'abcdef0123456789',
    'k',
  );
  const parsed = parseEntry('incidents/x.md', draft.content);
  if (!parsed.entry) throw new Error(`the fix entry does not parse: ${JSON.stringify(parsed.problems)}`);
  return parsed.entry.sections;
}

describe('entry markdown as rich text', () => {
  it("gives back a fix entry's Resolution as the person wrote it: code as code, no escapes, no joiners, no quote marker", () => {
    const s = fixEntrySections(FIX);
    const [words, creditLine] = entrySection(s['resolution'])!;
    expect(words).toEqual([
      'vacuumed the journal with ',
      { code: 'journalctl --vacuum-size=500M' },
      ', set LOG_LEVEL=info (see https://wiki.example.com/x), thanks @bob',
    ]);
    expect(creditLine).toEqual(['— from ', { person: { via: 'slack', id: 'U0ANN' } }, ' via Slack on 2026-11-29']);
    const shown = JSON.stringify(entrySection(s['resolution']));
    expect(shown).not.toMatch(/\\\\|\u2060|\["> /);
  });

  it('leaves out a Cause that only says nothing was recorded, keeps a real one', () => {
    expect(entrySection(fixEntrySections(FIX)['cause'])).toBeUndefined();
    expect(entrySection('Not recorded.')).toBeUndefined();
    expect(entrySection('  \n')).toBeUndefined();
    expect(entrySection(undefined)).toBeUndefined();
    expect(entrySection('the journal filled `/var`')).toEqual([['the journal filled ', { code: '/var' }]]);
  });

  it('makes no link, mention or markup from hostile entry text', () => {
    const s = fixEntrySections('<!channel> [click](https://evil.example) <b>x</b> **bold** @here `<!here>`');
    const runs = entrySection(s['resolution'])![0]!;
    // Everything is literal text: no link or person run came from what the person wrote.
    expect(runs.every((r) => typeof r === 'string' || 'code' in r)).toBe(true);
    expect(plainText(runs)).toBe('<!channel> [click](https://evil.example) <b>x</b> **bold** @here `<!here>`');
    // On Slack it is a literal text element (Slack parses no markup there); on Matrix, escaped HTML.
    expect(runs.map(inline).every((e) => e.type === 'text')).toBe(true);
    expect(inlineHtml(runs, 2000)).not.toMatch(/<a |<b>|<!channel>/);
  });

  it('names the credited person the surface way: a Slack mention for a Slack id, a pill for a Matrix id, text otherwise', () => {
    expect(person({ id: 'U0ANN', via: 'slack' })).toEqual({ type: 'user', user_id: 'U0ANN' });
    expect(person({ id: 'ann', via: 'slack' })).toMatchObject({ type: 'text', text: 'ann' });
    expect(person({ id: 'U0ANN', via: 'cli' })).toMatchObject({ type: 'text', text: 'U0ANN' });
    expect(inlineHtml([{ person: { id: '@ann:example.org', via: 'matrix' } }], 200)).toBe(
      '<a href="https://matrix.to/#/%40ann%3Aexample.org">@ann:example.org</a>',
    );
    expect(inlineHtml([{ person: { id: '<script>', via: 'matrix' } }], 200)).toBe('&lt;script&gt;');
    const [cli] = entryParagraphs(fixEntrySections('restarted it', 'cli', 'ann')['resolution']!).slice(-1);
    expect(plainText(cli!)).toBe('— from ann via the CLI on 2026-11-29');
    // An entry credited by Slack id (entries written before names were looked up) mentions them on Slack.
    const [old] = entryParagraphs('> restarted it\n>\n> — from @U0ANN via Slack on 2026-11-29').slice(-1);
    expect(old!.map(inline)).toContainEqual({ type: 'user', user_id: 'U0ANN' });
    // A display name the entry recorded is shown as written, with the surface it names (a directory
    // that knows exactly one Slack person by that name makes it theirs: people.test.ts); alone, text.
    const [named] = entryParagraphs('— from Ann Example via Slack on 2026-11-29');
    expect(named![1]).toEqual({ person: { via: 'entry', id: 'Ann Example', name: 'Ann Example', from: 'slack' } });
    expect(named!.map(inline).every((e) => e.type === 'text')).toBe(true);
    // The CLI is no chat surface to resolve a name on.
    expect(cli![1]).toEqual({ person: { via: 'entry', id: 'ann', name: 'ann' } });
  });
});
