/**
 * Untrusted text (operator notes, model prose, alert text) made inert for GitHub-flavoured
 * markdown: it cannot ping (`@user`, `@org/team`), reference issues (`#12`, `GH-12`), inject
 * HTML (tags, comments — so never one of our hidden `<!-- reprise:… -->` markers), build links
 * (bracketed, or GitHub's autolinks of bare `https://…` and `www.…`), images, headings (`#`, or
 * a setext `---` / `===` line under text), rules, tables or emphasis. It still reads as the
 * text that was written: the breaks are an invisible word joiner, or a backslash GitHub hides.
 */

import { stripUnsafe } from '../render/escape-text.js';

/** Word joiner: invisible, and breaks GitHub's mention and reference autolinking. */
const WJ = '\u2060';

/**
 * A code span a person wrote (`journalctl --vacuum-size=500M`) stays one: GitHub shows its
 * content literally — no mention, reference, link, emphasis or HTML inside it — so it is as inert
 * as escaped text and reads as code. One without markup characters only (`<`, `>`, `&`, a
 * backtick), on one line: anything else is escaped with the rest.
 */
const CODE_SPAN = /`([^`<>&\n]{1,300})`/g;

export function neutraliseMarkdown(text: string): string {
  // Control, bidi and every invisible character go first (escape-text.ts): they could hide or
  // reorder text; the word joiners added below are ours.
  const clean = stripUnsafe(text.replace(/\r\n?/g, '\n'));
  let out = '';
  let last = 0;
  for (const m of clean.matchAll(CODE_SPAN)) {
    if (m[1]!.trim() === '') continue;
    out += neutraliseText(clean.slice(last, m.index)) + m[0];
    last = m.index + m[0].length;
  }
  return out + neutraliseText(clean.slice(last));
}

function neutraliseText(text: string): string {
  return (
    text
      .replace(/&/g, '&amp;')
      .replace(/</g, '&lt;')
      .replace(/>/g, '&gt;')
      .replace(/([\\`*_{}[\]()#+!|~])/g, '\\$1')
      .replace(/@(?=[\p{L}\p{N}_-])/gu, `@${WJ}`)
      .replace(/#(?=\d)/g, `#${WJ}`)
      .replace(/\b(GH)-(?=\d)/gi, `$1-${WJ}`)
      // GitHub links `scheme://…` and `www.…` written bare; a word joiner inside either is not one.
      .replace(/:\/\//g, `:${WJ}//`)
      .replace(/(www)\./gi, `$1${WJ}.`)
      // A line of only `-` or `=` makes the line above a heading (or is a rule): escaped, it is text.
      .replace(/^([ \t]*)([-=])(?=[-= \t]*$)/gm, '$1\\$2')
  );
}

/** One line (titles, list items): newlines folded into spaces, then neutralised. */
export function neutraliseLine(text: string, maxChars = 300): string {
  const one = text.replace(/\s+/g, ' ').trim();
  return neutraliseMarkdown(one.length > maxChars ? `${one.slice(0, maxChars - 1)}…` : one);
}

/** A neutralised blockquote of `text`. */
export function quoteBlock(text: string): string {
  return neutraliseMarkdown(text.trim())
    .split('\n')
    .map((l) => (l.trim() === '' ? '>' : `> ${l}`))
    .join('\n');
}

/**
 * A title built from untrusted words (a note's first line, a fix): one line that cannot ping
 * (`@org/team`), reference (`#12`), open HTML or a hidden marker, yet reads as written — titles
 * are shown as text, so nothing is backslash-escaped.
 */
export function neutraliseTitle(text: string, maxChars = 200): string {
  const one = stripUnsafe(text)
    .replace(/\s+/g, ' ')
    .trim()
    .replace(/</g, '‹')
    .replace(/>/g, '›')
    .replace(/@(?=[\p{L}\p{N}_-])/gu, `@${WJ}`)
    .replace(/#(?=\d)/g, `#${WJ}`);
  return one.length > maxChars ? `${one.slice(0, maxChars - 1)}…` : one;
}
