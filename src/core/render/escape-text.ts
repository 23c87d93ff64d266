/**
 * Untrusted text (alert labels and annotations, catalog text, operator notes, model output) made
 * inert on a plain-text surface: terminal escapes (ESC, CSI), NUL, carriage returns, line and
 * paragraph separators, and every invisible character Unicode knows of — all of
 * `Default_Ignorable_Code_Point` (zero-width space and joiners, soft hyphen, invisible operators
 * U+2061–2064, Hangul fillers, the Mongolian vowel separator, variation selectors, tag
 * characters U+E0000–E007F that smuggle ASCII past a reader…) and all of `Bidi_Control`
 * (U+202E turns "gpj.exe" into "exe.jpg") — become visible `\u{…}` escapes. Unicode's own
 * property classes, not a hand list, so a character added to them is covered.
 *
 * Kept, because emoji need them and they hide nothing there: a zero-width joiner between two
 * emoji (👩‍💻, 🏳️‍🌈), and an emoji presentation selector (U+FE0E/FE0F) right after an emoji
 * or a keycap base (❤️, 1️⃣). Anywhere else — in isolation, after a letter, in a run — they are
 * escaped. Subdivision flags (🏴 + tag characters) lose their tags: those are the smuggling
 * vector. Every surface's renderer starts here and adds its own markup escaping; the CLI
 * prints through {@link terminalSafe}.
 */

const INVISIBLE = '\\p{Default_Ignorable_Code_Point}\\p{Bidi_Control}\\u2028\\u2029';
/** C0 (except \n and \t), DEL, C1, separators, default-ignorables, bidi controls. */
const UNSAFE = new RegExp(`[\\u0000-\\u0008\\u000B-\\u001F\\u007F-\\u009F${INVISIBLE}]`, 'gu');
const UNSAFE_OR_NEWLINE = new RegExp(`[\\u0000-\\u001F\\u007F-\\u009F${INVISIBLE}]`, 'gu');

const PICTOGRAPHIC = /^\p{Extended_Pictographic}$/u;
const MODIFIER = /^\p{Emoji_Modifier}$/u;
const ZWJ = 0x200d;
const KEYCAP = 0x20e3;

/** The code point ending just before UTF-16 offset `i`. */
function before(s: string, i: number): string {
  if (i <= 0) return '';
  const low = s.charCodeAt(i - 1);
  if (low >= 0xdc00 && low <= 0xdfff && i >= 2) {
    const high = s.charCodeAt(i - 2);
    if (high >= 0xd800 && high <= 0xdbff) return s.slice(i - 2, i);
  }
  return s[i - 1] ?? '';
}

/** The code point starting at UTF-16 offset `i`. */
function at(s: string, i: number): string {
  const cp = s.codePointAt(i);
  return cp === undefined ? '' : String.fromCodePoint(cp);
}

const isSelector = (ch: string): boolean => ch === '\uFE0F' || ch === '\uFE0E';

/** Whether the emoji presentation selector at `i` follows what it can modify. */
function selectorKept(s: string, i: number): boolean {
  const prev = before(s, i);
  if (PICTOGRAPHIC.test(prev)) return true;
  return /^[#*0-9]$/.test(prev) && s.codePointAt(i + 1) === KEYCAP;
}

/** Whether the joiner at `i` joins two emoji (the one before may carry a skin tone or a selector). */
function joinerKept(s: string, i: number): boolean {
  if (!PICTOGRAPHIC.test(at(s, i + 1))) return false;
  const prev = before(s, i);
  if (PICTOGRAPHIC.test(prev) || MODIFIER.test(prev)) return true;
  return isSelector(prev) && selectorKept(s, i - 1);
}

/** Whether the unsafe-class character `ch` at `i` is part of an emoji and stays. */
function kept(ch: string, s: string, i: number): boolean {
  const cp = ch.codePointAt(0);
  if (cp === ZWJ) return joinerKept(s, i);
  if (isSelector(ch)) return selectorKept(s, i);
  return false;
}

function visible(ch: string): string {
  if (ch === '\n') return '\\n';
  if (ch === '\t') return '\\t';
  if (ch === '\r') return '\\r';
  return `\\u{${ch.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}}`;
}

function replaceUnsafe(text: string, re: RegExp, show: (ch: string) => string): string {
  return text.replace(re, (ch: string, i: number, s: string) => (kept(ch, s, i) ? ch : show(ch)));
}

/** Escapes unsafe characters; newlines and tabs stay (for multi-line text the renderer lays out). */
export function escapeControl(text: string): string {
  return replaceUnsafe(text, UNSAFE, visible);
}

/** Escapes unsafe characters *and* newlines and tabs: for text that must stay on one line (a header, a label). */
export function escapeLine(text: string): string {
  return replaceUnsafe(text, UNSAFE_OR_NEWLINE, visible);
}

/** True when `text` holds nothing {@link escapeControl} would change. */
export function isInert(text: string): boolean {
  return escapeControl(text) === text;
}

/** A JSON string escape (`\u202E`; a surrogate pair for an astral code point). */
function jsonEscape(ch: string): string {
  let out = '';
  for (let k = 0; k < ch.length; k++) out += `\\u${ch.charCodeAt(k).toString(16).toUpperCase().padStart(4, '0')}`;
  return out;
}

/**
 * Text for a terminal (the CLI's output), newlines and tabs kept: every unsafe character becomes
 * a JSON-style `\uXXXX` escape. JSON stays valid and parses to the same value (inside a string
 * the escape means the character itself; outside strings JSON holds none of them), so
 * `--json` output and exports can go through it too.
 */
export function terminalSafe(text: string): string {
  return replaceUnsafe(text, UNSAFE, jsonEscape);
}

/** Removes unsafe characters (newlines and tabs stay): for a surface that shows no escapes, like GitHub markdown. */
export function stripUnsafe(text: string): string {
  return replaceUnsafe(text, UNSAFE, () => '');
}
