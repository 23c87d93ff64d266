/**
 * What a Mattermost client shows for a post (issue 28 item 1, on the third surface): the markdown
 * rendered to text — backslash escapes shown as the character, `**bold**` and `_emphasis_` as
 * their words, `[label](url)` as `label [url]`, code spans in backticks — and the post's buttons
 * (message attachments) under it. Mentions stay `@name`, as the client shows them.
 */

/** Private-use stand-ins for escaped characters, so markup regexes never see them. */
const PUA = 0xe000;

export function mattermostMarkdownText(md: string): string {
  const lit = md.replace(/\\([!-/:-@[-`{-~])/g, (_m, c: string) => String.fromCharCode(PUA + c.charCodeAt(0)));
  const shown = lit
    .replace(/\[([^\]]*)\]\(([^)\s]+)\)/g, '$1 [$2]')
    .replace(/\*\*([^*]+)\*\*/g, '$1')
    .replace(/(^|\s)_([^_\n]+)_(?=\s|$)/gm, '$1$2')
    .replace(/(`+) ([^`]*?) \1/g, '`$2`');
  return shown.replace(/[\uE000-\uE07F]/g, (c) => String.fromCharCode(c.charCodeAt(0) - PUA));
}

/** A post's text and its buttons, as read. */
export function mattermostPostText(message: string, props: Record<string, unknown> | undefined): string {
  const attachments = Array.isArray(props?.['attachments']) ? (props['attachments'] as Array<{ actions?: Array<{ name?: string }> }>) : [];
  const buttons = attachments.flatMap((a) => a.actions ?? []).map((b) => `[${String(b.name)}]`);
  return `${mattermostMarkdownText(message)}${buttons.length ? `\n${buttons.join(' ')}` : ''}`;
}
