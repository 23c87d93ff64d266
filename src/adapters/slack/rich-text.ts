/**
 * Rich-text building blocks for Block Kit. Untrusted text only ever lands in a rich-text
 * `text` element (or a `plain_text` object), which Slack shows literally: `<!channel>`,
 * `<@U123>`, `<http://x|click>` and `*bold*` stay characters. Mentions, links and emphasis
 * come only from structure (an {@link Inline} run, or the card's `mentions` field).
 */
import type { types } from '@slack/bolt';
import type { Inline, RichText } from '../../core/chat/thread-view.js';
import { escapeControl, escapeLine } from '../../core/render/escape-text.js';
import { clip, safeUrl, SLACK_LIMITS } from './slack-limits.js';

export type RichTextElement = types.RichTextElement;
export type RichTextBlockElement = types.RichTextBlockElement;
export type RichTextSection = types.RichTextSection;
export type RichTextBlock = types.RichTextBlock;
export type Style = NonNullable<types.RichTextText['style']>;

/** A literal run of text: control characters made visible, cut to Slack's per-text limit. */
export function text(s: string, style?: Style, oneLine = false): types.RichTextText {
  const t = clip(oneLine ? escapeLine(s) : escapeControl(s), SLACK_LIMITS.text);
  return style ? { type: 'text', text: t, style } : { type: 'text', text: t };
}

/** A link when the URL is http(s), else the label and URL as literal text. */
export function link(url: string, label: string): RichTextElement {
  const href = safeUrl(url);
  const shown = clip(escapeLine(label), SLACK_LIMITS.buttonText * 4);
  if (!href) return text(`${shown} (${url})`, undefined, true);
  return { type: 'link', url: href, text: shown };
}

/** One inline run of a view as rich-text elements. */
export function inline(run: Inline): RichTextElement {
  if (typeof run === 'string') return text(run);
  if ('code' in run) return text(run.code, { code: true });
  if ('strong' in run) return text(run.strong, { bold: true });
  if ('person' in run) return person(run.person);
  return link(run.link.url, run.link.label);
}

const SLACK_USER_ID = /^[UW][A-Z0-9]{2,30}$/;

/** A person the bot names: a Slack user id as a mention (Slack shows their name), anyone else as `@name` text. */
export function person(p: { name: string; via: string }): RichTextElement {
  const bare = p.name.replace(/^@+/, '');
  if (p.via === 'slack' && SLACK_USER_ID.test(bare)) return { type: 'user', user_id: bare };
  return text(`@${bare}`, undefined, true);
}

/** A paragraph of a view as rich-text elements (empty text runs dropped: Slack rejects them). */
export function inlines(p: RichText): RichTextElement[] {
  return p.map(inline).filter((e) => e.type !== 'text' || e.text !== '');
}

export function section(elements: RichTextElement[]): RichTextSection {
  return { type: 'rich_text_section', elements: elements.filter((e) => e.type !== 'text' || e.text !== '') };
}

/** A command or a table: monospace, literal. */
export function preformatted(code: string): types.RichTextPreformatted {
  return { type: 'rich_text_preformatted', elements: [text(code === '' ? ' ' : code)] };
}

export function bullets(items: RichTextElement[][]): types.RichTextList {
  return { type: 'rich_text_list', style: 'bullet', elements: items.map(section) };
}

/** Characters of text an element carries (what Slack counts against its limits). */
export function textLength(node: unknown): number {
  if (Array.isArray(node)) return node.reduce((n: number, c) => n + textLength(c), 0);
  if (node === null || typeof node !== 'object') return 0;
  let n = 0;
  for (const [k, v] of Object.entries(node)) {
    if ((k === 'text' || k === 'url') && typeof v === 'string') n += v.length;
    else if (typeof v === 'object') n += textLength(v);
  }
  return n;
}

/** Cuts an element's runs so its text fits in `max` characters (last run ends in "…"). */
function fitElement(el: RichTextBlockElement, max: number): RichTextBlockElement {
  if (textLength(el) <= max) return el;
  if (el.type === 'rich_text_list') {
    const kept: RichTextSection[] = [];
    let used = 0;
    for (const item of el.elements) {
      const room = max - used;
      if (room <= 1) break;
      const fitted = fitElement(item, room) as RichTextSection;
      kept.push(fitted);
      used += textLength(fitted);
    }
    return { ...el, elements: kept };
  }
  const runs: RichTextElement[] = [];
  let used = 0;
  for (const run of el.elements as RichTextElement[]) {
    const len = textLength(run);
    if (used + len <= max) {
      runs.push(run);
      used += len;
      continue;
    }
    const room = max - used;
    if (room >= 1 && run.type === 'text') runs.push({ ...run, text: clip(run.text, room) });
    else if (room >= 1 && run.type === 'link') runs.push(text(clip(run.text ?? run.url, room)));
    break;
  }
  return { ...el, elements: runs } as RichTextBlockElement;
}

/**
 * Packs rich-text elements into as few `rich_text` blocks as keep each block within Slack's
 * per-text limit; an element bigger than the limit on its own is cut with "…".
 */
export function richTextBlocks(elements: RichTextBlockElement[], max: number = SLACK_LIMITS.text): RichTextBlock[] {
  const out: RichTextBlock[] = [];
  let current: RichTextBlockElement[] = [];
  let used = 0;
  for (const raw of elements) {
    const el = fitElement(raw, max);
    const len = textLength(el);
    if (current.length > 0 && used + len > max) {
      out.push({ type: 'rich_text', elements: current });
      current = [];
      used = 0;
    }
    current.push(el);
    used += len;
  }
  if (current.length > 0) out.push({ type: 'rich_text', elements: current });
  return out;
}

/** Text for a `plain_text` object: one line, control characters visible, cut to `max`. */
export function plain(s: string, max: number): types.PlainTextElement {
  return { type: 'plain_text', text: clip(escapeLine(s), max), emoji: true };
}
