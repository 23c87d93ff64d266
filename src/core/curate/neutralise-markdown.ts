/**
 * Untrusted text (operator notes, model prose, alert text) made inert for GitHub-flavoured
 * markdown: it cannot ping (`@user`, `@org/team`), reference issues (`#12`), inject HTML
 * (tags, comments — so never one of our hidden `<!-- reprise:… -->` markers), build links,
 * images, headings, tables or emphasis. It still reads as the text that was written.
 */

import { stripUnsafe } from '../render/escape-text.js';

/** Word joiner: invisible, and breaks GitHub's mention and reference autolinking. */
const WJ = '\u2060';
export function neutraliseMarkdown(text: string): string {
  // Control, bidi and every invisible character go first (escape-text.ts): they could hide or
  // reorder text; the word joiners added below are ours.
  return stripUnsafe(text.replace(/\r\n?/g, '\n'))
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/([\\`*_{}[\]()#+!|~])/g, '\\$1')
    .replace(/@(?=[\p{L}\p{N}_-])/gu, `@${WJ}`)
    .replace(/#(?=\d)/g, `#${WJ}`);
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
