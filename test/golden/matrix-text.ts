/**
 * What a Matrix client shows for a message (issue 28 item 1): clients that render HTML show the
 * `formatted_body` (here as text, through html-to-text: code in backticks, links as
 * `label [url]`, a `matrix.to` pill as the person it names, quotes with `>`), the others the plain `body`. The golden shift shows both,
 * since both are what some person reads.
 */
import { convert } from 'html-to-text';

export function matrixHtmlText(html: string): string {
  return convert(html, {
    wordwrap: false,
    selectors: [
      { selector: 'a', options: { hideLinkHrefIfSameAsText: true } },
      // A pill: clients show the person, not the link.
      { selector: 'a[href^="https://matrix.to/#/"]', format: 'inline' },
      { selector: 'code', format: 'inlineSurround', options: { prefix: '`', suffix: '`' } },
      { selector: 'pre', format: 'block' },
      { selector: 'ul', options: { itemPrefix: '• ' } },
      { selector: 'table', format: 'dataTable' },
    ],
  });
}

/** A message's content as read: the HTML a rich client shows, then the plain body. */
export function matrixMessageText(content: Record<string, unknown>): string {
  const body = typeof content['body'] === 'string' ? content['body'] : '';
  const html = content['format'] === 'org.matrix.custom.html' && typeof content['formatted_body'] === 'string' ? content['formatted_body'] : undefined;
  if (html === undefined) return `[body]\n${body}`;
  return `[formatted_body]\n${matrixHtmlText(html).trimEnd()}\n[body]\n${body}`;
}
