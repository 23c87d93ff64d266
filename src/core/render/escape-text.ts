/**
 * Untrusted text (alert labels and annotations, catalog text, operator notes) made inert on a
 * plain-text surface: terminal escapes (ESC, CSI), NUL, carriage returns, bidi overrides
 * (U+202E turns "gpj.exe" into "exe.jpg"), zero-width and line/paragraph separators become
 * visible `\u{…}` escapes. Zero-width joiners are kept: emoji sequences need them. Every
 * surface's renderer starts here and adds its own markup escaping.
 */

/** C0 (except \n and \t), DEL, C1, line/paragraph separators, bidi controls, zero-width space and no-break, BOM. */
const UNSAFE = /[\u0000-\u0008\u000B-\u001F\u007F-\u009F\u061C\u200B\u200E\u200F\u2028\u2029\u202A-\u202E\u2060\u2066-\u2069\uFEFF]/g;
const UNSAFE_OR_NEWLINE = /[\u0000-\u001F\u007F-\u009F\u061C\u200B\u200E\u200F\u2028\u2029\u202A-\u202E\u2060\u2066-\u2069\uFEFF]/g;

function visible(ch: string): string {
  if (ch === '\n') return '\\n';
  if (ch === '\t') return '\\t';
  if (ch === '\r') return '\\r';
  return `\\u{${ch.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}}`;
}

/** Escapes unsafe characters; newlines and tabs stay (for multi-line text the renderer lays out). */
export function escapeControl(text: string): string {
  return text.replace(UNSAFE, visible);
}

/** Escapes unsafe characters *and* newlines and tabs: for text that must stay on one line (a header, a label). */
export function escapeLine(text: string): string {
  return text.replace(UNSAFE_OR_NEWLINE, visible);
}

/** True when `text` holds nothing {@link escapeControl} would change. */
export function isInert(text: string): boolean {
  UNSAFE.lastIndex = 0;
  return !UNSAFE.test(text);
}
