import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { escapeControl, escapeLine, isInert } from '../../../src/core/render/escape-text.js';
import { urlKey } from '../../../src/core/url-key.js';

describe('escapeControl / escapeLine', () => {
  it.each([
    ['ESC sequences', 'a\u001b[31mred', 'a\\u{001B}[31mred'],
    ['NUL and BEL', 'x\u0000y\u0007', 'x\\u{0000}y\\u{0007}'],
    ['carriage return', 'ok\rFAKE', 'ok\\rFAKE'],
    ['bidi override', 'abc\u202Egpj.exe', 'abc\\u{202E}gpj.exe'],
    ['isolates and marks', '\u2066x\u2069\u200E\u200F\u061C', '\\u{2066}x\\u{2069}\\u{200E}\\u{200F}\\u{061C}'],
    ['zero-width space and BOM', 'a\u200Bb\uFEFF', 'a\\u{200B}b\\u{FEFF}'],
    ['C1 and line separators', 'a\u0085b\u2028c\u2029', 'a\\u{0085}b\\u{2028}c\\u{2029}'],
    ['DEL', 'a\u007F', 'a\\u{007F}'],
  ])('makes %s visible', (_what, raw, shown) => {
    expect(escapeControl(raw)).toBe(shown);
    expect(isInert(escapeControl(raw))).toBe(true);
    expect(isInert(raw)).toBe(false);
  });

  it('keeps newlines and tabs in multi-line text, but not on one line', () => {
    expect(escapeControl('a\nb\tc')).toBe('a\nb\tc');
    expect(escapeLine('a\nb\tc')).toBe('a\\nb\\tc');
  });

  it('leaves ordinary text, emoji and joined emoji sequences alone', () => {
    const s = 'Café ⚡ 👩‍💻 日本語 – ok';
    expect(escapeControl(s)).toBe(s);
    expect(escapeLine(s)).toBe(s);
  });

  it('never lets an unsafe character through, for any string', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 200 }), (s) => {
        expect(isInert(escapeControl(s))).toBe(true);
        expect(escapeLine(s)).not.toMatch(/[\n\t]/);
      }),
    );
  });
});

describe('urlKey', () => {
  it('drops query, fragment and trailing slashes', () => {
    expect(urlKey(' https://x.io/runbooks/KubePodCrashLooping/?a=1#b ')).toBe('https://x.io/runbooks/KubePodCrashLooping');
    expect(urlKey('https://x.io/a#frag?not-query')).toBe('https://x.io/a');
    expect(urlKey('////')).toBe('');
  });

  // How the work grows is measured by the benchmark (REPRISE_BENCH_ONLY=growth); the quadratic
  // regexes this replaced took minutes on these, past the test's timeout.
  it('reads hostile input right (a 1 MiB run of slashes or question marks)', () => {
    const slashes = `a${'/'.repeat(1 << 20)}b`;
    const marks = `${'?'.repeat(1 << 20)}\n`;
    expect(urlKey(slashes)).toBe(slashes);
    expect(urlKey(marks)).toBe('');
  });
});
