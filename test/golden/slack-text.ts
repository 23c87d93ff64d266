/**
 * What a Slack client shows for a message (issue 28 item 1): Block Kit blocks rendered to text,
 * mrkdwn decoded as Slack decodes it. Slack has no backslash escapes: a `\_` a bot sends is a
 * visible backslash, and so it is here. Mentions show as the person's name (`@ann`), as the
 * client shows them; `<!channel>` as `@channel` (a broadcast); a link as `label <url>`.
 * Styles a person can see are kept as marks: code as `code`, a code block fenced.
 */

/** Names a client shows for user ids (the stand-in's workspace). */
export type Directory = Readonly<Record<string, string>>;

const ENTITY: Record<string, string> = { '&lt;': '<', '&gt;': '>', '&amp;': '&' };

/** mrkdwn (a `text` field or a `mrkdwn` text object) as the client shows it. */
export function mrkdwnToText(s: string, users: Directory): string {
  return s
    .replace(/<([^<>]*)>/g, (_m, inner: string) => {
      const [target = '', label] = inner.split('|');
      if (target.startsWith('@')) return `@${users[target.slice(1)] ?? target.slice(1)}`;
      if (target.startsWith('#')) return `#${label ?? target.slice(1)}`;
      if (target.startsWith('!subteam^')) return `@${label ?? target.slice(9)}`;
      if (target.startsWith('!')) return `@${target.slice(1).split('^')[0]}`;
      return label ? `${label} <${target}>` : target;
    })
    .replace(/&lt;|&gt;|&amp;/g, (e) => ENTITY[e]!);
}

type Node = Record<string, unknown>;
const str = (v: unknown): string => (typeof v === 'string' ? v : '');
const nodes = (v: unknown): Node[] => (Array.isArray(v) ? (v as Node[]) : []);

/** A text object: plain_text literally, mrkdwn decoded. */
function textObject(t: unknown, users: Directory): string {
  if (!t || typeof t !== 'object') return '';
  const o = t as Node;
  return o['type'] === 'mrkdwn' ? mrkdwnToText(str(o['text']), users) : str(o['text']);
}

/** One rich-text run: literal text (Slack never parses markup inside it), styles as marks. */
function run(e: Node, users: Directory): string {
  switch (e['type']) {
    case 'text': {
      const style = (e['style'] ?? {}) as Node;
      const t = str(e['text']);
      return style['code'] ? `\`${t}\`` : t;
    }
    case 'link':
      return e['text'] ? `${str(e['text'])} <${str(e['url'])}>` : str(e['url']);
    case 'user':
      return `@${users[str(e['user_id'])] ?? str(e['user_id'])}`;
    case 'usergroup':
      return `@${str(e['usergroup_id'])}`;
    case 'broadcast':
      return `@${str(e['range'])}`;
    case 'emoji':
      return e['unicode']
        ? String.fromCodePoint(
            ...str(e['unicode'])
              .split('-')
              .map((h) => parseInt(h, 16)),
          )
        : `:${str(e['name'])}:`;
    case 'channel':
      return `#${str(e['channel_id'])}`;
    default:
      return `[${str(e['type'])}?]`;
  }
}

function richElement(el: Node, users: Directory): string[] {
  const runs = (): string =>
    nodes(el['elements'])
      .map((e) => run(e, users))
      .join('');
  switch (el['type']) {
    case 'rich_text_section':
      return runs().split('\n');
    case 'rich_text_preformatted':
      return ['```', ...runs().replace(/^`|`$/g, '').split('\n'), '```'];
    case 'rich_text_quote':
      return runs()
        .split('\n')
        .map((l) => `┃ ${l}`);
    case 'rich_text_list': {
      const ordered = el['style'] === 'ordered';
      return nodes(el['elements']).flatMap((item, i) => richElement(item, users).map((l, j) => (j === 0 ? `${ordered ? `${i + 1}.` : '•'} ${l}` : `  ${l}`)));
    }
    default:
      return [`[${str(el['type'])}?]`];
  }
}

/** One block as the lines a client shows. */
function block(b: Node, users: Directory): string[] {
  switch (b['type']) {
    case 'header':
      return [textObject(b['text'], users)];
    case 'section': {
      const out = b['text'] ? textObject(b['text'], users).split('\n') : [];
      for (const f of nodes(b['fields'])) out.push(...textObject(f, users).split('\n'));
      return out;
    }
    case 'context':
      return [
        nodes(b['elements'])
          .map((e) => (e['type'] === 'image' ? '' : textObject(e, users)))
          .filter((t) => t !== '')
          .join('  '),
      ];
    case 'divider':
      return ['───'];
    case 'rich_text':
      return nodes(b['elements']).flatMap((e) => richElement(e, users));
    case 'actions':
      return [
        nodes(b['elements'])
          .map((e) => {
            const label = e['type'] === 'static_select' ? textObject(e['placeholder'], users) || 'choose…' : textObject(e['text'], users);
            return `[${label}${e['type'] === 'static_select' ? ' ▾' : ''}]`;
          })
          .join(' '),
      ];
    default:
      return [`[${str(b['type'])} block?]`];
  }
}

/**
 * A message as a Slack client shows it: its blocks when it has them (the `text` is then only the
 * notification), else its `text` as mrkdwn.
 */
export function slackMessageText(m: { text?: unknown; blocks?: unknown }, users: Directory): string {
  const blocks = nodes(m.blocks);
  const lines = blocks.length > 0 ? blocks.flatMap((b) => block(b, users)) : mrkdwnToText(str(m.text), users).split('\n');
  return lines.map((l) => l.trimEnd()).join('\n');
}

/** The notification a message raises (its `text`), as the client shows it. */
export function slackNotificationText(m: { text?: unknown }, users: Directory): string {
  return mrkdwnToText(str(m.text), users);
}
