import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { neutraliseLine, neutraliseMarkdown, quoteBlock } from '../../../src/core/curate/neutralise-markdown.js';
import { hasMarker, marker, markerValues } from '../../../src/core/curate/markers.js';

describe('neutraliseMarkdown', () => {
  it('breaks user and team mentions and issue references with a word joiner', () => {
    expect(neutraliseMarkdown('ping @alice and @org/team, fixes #12')).toBe('ping @\u2060alice and @\u2060org/team, fixes \\#\u206012');
  });

  it('turns HTML, Slack specials and comments (so forged markers) into text', () => {
    const out = neutraliseMarkdown('<!here> <script>x</script> <!-- reprise:dup=abcdef12 -->');
    expect(out).toBe('&lt;\\!here&gt; &lt;script&gt;x&lt;/script&gt; &lt;\\!-- reprise:dup=abcdef12 --&gt;');
    expect(hasMarker(out, 'dup', 'abcdef12')).toBe(false);
  });

  it('escapes the markdown that builds links, images, emphasis, headings and tables; a plain code span stays code', () => {
    expect(neutraliseMarkdown('[x](javascript:y) ![i](http://t) **b** _i_ # h | t | `c` ~~s~~')).toBe(
      '\\[x\\]\\(javascript:y\\) \\!\\[i\\]\\(http:\u2060//t\\) \\*\\*b\\*\\* \\_i\\_ \\# h \\| t \\| `c` \\~\\~s\\~\\~',
    );
  });

  it('keeps a code span a person wrote as code (GitHub shows it literally), but not one that carries markup', () => {
    expect(neutraliseMarkdown('ran `journalctl --vacuum-size=500M` on LOG_LEVEL=info, @ann')).toBe(
      'ran `journalctl --vacuum-size=500M` on LOG\\_LEVEL=info, @\u2060ann',
    );
    // Markup inside backticks is escaped with everything else: no marker, tag or entity survives as one.
    const hostile = neutraliseMarkdown('`<!-- reprise:dup=abcdef12 -->` `<!channel>` `a&amp;b` ``double``');
    expect(hostile).not.toMatch(/<!--|<!channel>|&amp;b`/);
    expect(hasMarker(hostile, 'dup', 'abcdef12')).toBe(false);
    // An unclosed backtick is text.
    expect(neutraliseMarkdown('a `b c')).toBe('a \\`b c');
  });

  it('leaves no autolink: bare URLs of any scheme and www. get a word joiner GitHub does not link across', () => {
    expect(neutraliseMarkdown('see https://evil.example/x and HTTP://Evil.example, ftp://f.example')).toBe(
      'see https:\u2060//evil.example/x and HTTP:\u2060//Evil.example, ftp:\u2060//f.example',
    );
    expect(neutraliseMarkdown('go to www.evil.example or WWW.Evil.example/login')).toBe('go to www\u2060.evil.example or WWW\u2060.Evil.example/login');
    expect(neutraliseMarkdown('mail admin@evil.example, see GH-12')).toBe('mail admin@\u2060evil.example, see GH-\u206012');
    // It still reads as written once the invisible joiner is gone.
    expect(neutraliseMarkdown('https://a.example/www.b').replaceAll('\u2060', '')).toBe('https://a.example/www.b');
  });

  it('leaves no setext heading or rule: a line of only - or = under text is escaped, in a quote too', () => {
    expect(neutraliseMarkdown('Title\n---\nBig\n===\n  - - -\n= =\n-- \n- a list item stays')).toBe(
      'Title\n\\---\nBig\n\\===\n  \\- - -\n\\= =\n\\-- \n- a list item stays',
    );
    expect(quoteBlock('Owned\n=====\nby @x')).toBe('> Owned\n> \\=====\n> by @\u2060x');
    expect(neutraliseLine('a\n---')).toBe('a ---');
  });

  it('drops control and bidi characters; a line stays one line; a quote quotes every line', () => {
    expect(neutraliseMarkdown('a\u202Eb\u0000c\r\nd')).toBe('abc\nd');
    expect(neutraliseLine('one\ntwo\n\nthree')).toBe('one two three');
    expect(quoteBlock('first\n\n# second')).toBe('> first\n>\n> \\# second');
  });

  it('whatever the input, no raw angle bracket, no live mention and no marker survive', () => {
    fc.assert(
      fc.property(
        fc.string({ unit: 'grapheme-ascii', maxLength: 200 }),
        fc.constantFrom('', '@team ', '<!-- reprise:dup=abcdef12 -->', '@org/x', 'x\n---\n', 'www.evil.example ', 'https://evil.example\n=\n', ' - - -\n'),
        (s, extra) => {
          const out = neutraliseMarkdown(extra + s);
          expect(out).not.toMatch(/[<>]/);
          expect(out).not.toMatch(/@[A-Za-z0-9_-]/);
          expect(markerValues(out, 'dup')).toEqual([]);
          // GitHub's extended autolinks and setext underlines / rules (CommonMark 4.1, 4.3; GFM 6.9).
          expect(out).not.toMatch(/[a-z]:\/\//i);
          expect(out).not.toMatch(/www\./i);
          for (const line of out.split('\n')) expect(line).not.toMatch(/^ {0,3}(=+|-+)[ \t]*$|^ {0,3}([-*_])([ \t]*\2){2,}[ \t]*$/);
        },
      ),
    );
  });
});

describe('markers', () => {
  it('writes only well-formed values and finds them back', () => {
    const m = marker('dup', 'a'.repeat(64));
    expect(hasMarker(`x\n${m}\ny`, 'dup', 'a'.repeat(64))).toBe(true);
    expect(markerValues(`${marker('seen', 'o-1')} ${marker('seen', 'o-2')}`, 'seen')).toEqual(['o-1', 'o-2']);
    expect(() => marker('dup', 'not hex -->')).toThrow(/bad dup marker/);
    expect(() => marker('note', 'x --> <b>')).toThrow(/bad note marker/);
  });
});
