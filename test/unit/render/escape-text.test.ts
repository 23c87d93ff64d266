import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { escapeControl, escapeLine, isInert, terminalSafe } from '../../../src/core/render/escape-text.js';
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

  it.each([
    ['zero-width non-joiner', 'pay\u200Cpal', 'pay\\u{200C}pal'],
    ['a zero-width joiner between letters', 'ad\u200Dmin', 'ad\\u{200D}min'],
    ['a joiner after an emoji but before a letter', '👩\u200Dx', '👩\\u{200D}x'],
    ['soft hyphen', 'pass\u00ADword', 'pass\\u{00AD}word'],
    ['invisible operators', 'a\u2061b\u2062c\u2063d\u2064', 'a\\u{2061}b\\u{2062}c\\u{2063}d\\u{2064}'],
    ['tag characters (ASCII smuggling)', 'ok\u{E0049}\u{E0047}\u{E004E}', 'ok\\u{E0049}\\u{E0047}\\u{E004E}'],
    ['language tag and cancel tag', '\u{E0001}\u{E007F}', '\\u{E0001}\\u{E007F}'],
    ['Mongolian vowel separator', 'a\u180Eb', 'a\\u{180E}b'],
    ['a variation selector in isolation', '\uFE0Fx', '\\u{FE0F}x'],
    ['a variation selector after a letter', 'a\uFE00b\uFE0F', 'a\\u{FE00}b\\u{FE0F}'],
    ['a run of variation selectors after an emoji (byte smuggling)', '😀\uFE0F\uFE01\u{E0100}', '😀\uFE0F\\u{FE01}\\u{E0100}'],
    ['combining grapheme joiner', 'a\u034Fb', 'a\\u{034F}b'],
    ['Hangul fillers', '\u115F\u1160\u3164\uFFA0', '\\u{115F}\\u{1160}\\u{3164}\\u{FFA0}'],
    ['word joiner, invisible times and reserved ignorables', '\u2060\u2065\uFFF0', '\\u{2060}\\u{2065}\\u{FFF0}'],
    ['Khmer inherent vowels', '\u17B4\u17B5', '\\u{17B4}\\u{17B5}'],
    ['musical symbol format controls', '\u{1D173}', '\\u{1D173}'],
    ['shorthand format controls', '\u{1BCA0}', '\\u{1BCA0}'],
  ])('makes %s visible', (_what, raw, shown) => {
    expect(escapeControl(raw)).toBe(shown);
    expect(escapeLine(raw)).toBe(shown);
    expect(isInert(escapeControl(raw))).toBe(true);
    expect(isInert(raw)).toBe(false);
  });

  it('keeps emoji sequences whole: joined emoji, skin tones, presentation selectors, keycaps', () => {
    for (const s of ['👩‍💻', '🏳️‍🌈', '👨🏽‍🚒', '🧑🏿‍🤝‍🧑🏻', '❤️', '1️⃣', '#️⃣', '👁️‍🗨️', '☺︎']) {
      expect(escapeControl(s), s).toBe(s);
      expect(isInert(s), s).toBe(true);
    }
  });

  it('covers every Default_Ignorable_Code_Point and Bidi_Control, in isolation', () => {
    const escaped: number[] = [];
    for (let cp = 0; cp <= 0x10ffff; cp++) {
      if (cp >= 0xd800 && cp <= 0xdfff) continue;
      const ch = String.fromCodePoint(cp);
      if (!/^[\p{Default_Ignorable_Code_Point}\p{Bidi_Control}]$/u.test(ch)) continue;
      // Between letters, where no emoji rule can keep it.
      if (escapeControl(`a${ch}b`) === `a${ch}b`) escaped.push(cp);
    }
    expect(escaped.map((c) => c.toString(16))).toEqual([]);
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

describe('terminalSafe', () => {
  it('escapes for a terminal in JSON style, so JSON stays valid and parses to the same value', () => {
    const value = { summary: 'gpj\u202E.exe \u200B \u{E0041} \u001b[2J', ok: '👩‍💻 ❤️' };
    const text = terminalSafe(JSON.stringify(value));
    expect(text).toBe('{"summary":"gpj\\u202E.exe \\u200B \\uDB40\\uDC41 \\u001b[2J","ok":"👩‍💻 ❤️"}');
    expect(JSON.parse(text)).toEqual(value);
    expect(terminalSafe('a\u202Eb\nc\td\r')).toBe('a\\u202Eb\nc\td\\u000D');
  });

  it('leaves nothing unsafe, for any string', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 200 }), (s) => {
        expect(isInert(terminalSafe(s))).toBe(true);
        expect(JSON.parse(terminalSafe(JSON.stringify(s)))).toBe(s);
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
