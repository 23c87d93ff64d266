/**
 * Slack's message text (its own markup: `<@U1>`, `<#C1|name>`, `<!here>`, `<url|label>`, and
 * `&amp;` `&lt;` `&gt;`) turned into plain text for the bot, with mentions of the bot removed.
 * The result is text to store and quote, never to send back as markup.
 */

export interface PlainMessage {
  text: string;
  /** The bot was mentioned (`<@BOT>`), so the message is addressed to it. */
  addressed: boolean;
}

/** One `<…>` sequence as plain text ('' for a mention of the bot itself). */
function token(inner: string, botUserId: string | undefined): { text: string; bot: boolean } {
  const bar = inner.indexOf('|');
  const target = bar < 0 ? inner : inner.slice(0, bar);
  const label = bar < 0 ? undefined : inner.slice(bar + 1);
  if (target.startsWith('@')) {
    const id = target.slice(1);
    if (botUserId !== undefined && id === botUserId) return { text: '', bot: true };
    return { text: `@${label ?? id}`, bot: false };
  }
  if (target.startsWith('#')) return { text: `#${label ?? target.slice(1)}`, bot: false };
  if (target.startsWith('!')) {
    const special = target.slice(1);
    if (special.startsWith('subteam^')) return { text: label ?? `@${special.slice('subteam^'.length)}`, bot: false };
    if (special.startsWith('date^')) return { text: label ?? '', bot: false };
    return { text: `@${label ?? special}`, bot: false };
  }
  if (target.startsWith('mailto:')) return { text: label ?? target.slice('mailto:'.length), bot: false };
  return { text: label !== undefined && label !== target ? `${label} (${target})` : target, bot: false };
}

function unescapeEntities(s: string): string {
  return s.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
}

/** Plain text of a Slack message; linear (one pass over `<…>` sequences without nesting). */
export function slackTextToPlain(text: string, botUserId?: string): PlainMessage {
  let addressed = false;
  const replaced = text.replace(/<([^<>]*)>/g, (_m, inner: string) => {
    const t = token(inner, botUserId);
    if (t.bot) addressed = true;
    return t.text;
  });
  const plain = unescapeEntities(replaced)
    .replace(/[ \t]{2,}/g, ' ')
    .trim();
  return { text: plain, addressed };
}

/** True when Slack's `text` mentions the bot. */
export function mentionsUser(text: string, userId: string): boolean {
  return text.includes(`<@${userId}>`) || text.includes(`<@${userId}|`);
}
