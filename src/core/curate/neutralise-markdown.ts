/**
 * Untrusted text (operator notes, model prose, alert text) made inert for GitHub-flavoured
 * markdown: it cannot ping (`@user`, `@org/team`), reference issues (`#12`), inject HTML
 * (tags, comments — so never one of our hidden `<!-- reprise:… -->` markers), build links,
 * images, headings, tables or emphasis. It still reads as the text that was written.
 */

/** Word joiner: invisible, and breaks GitHub's mention and reference autolinking. */
const WJ = '\u2060';
/** Control and bidi characters that could hide or reorder text. */
const CONTROL = /[\u0000-\u0008\u000B-\u001F\u007F-\u009F\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069\uFEFF]/g;

export function neutraliseMarkdown(text: string): string {
  return text
    .replace(/\r\n?/g, '\n')
    .replace(CONTROL, '')
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
