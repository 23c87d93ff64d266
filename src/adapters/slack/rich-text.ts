/**
 * Rich-text building blocks for Block Kit. Untrusted text only ever lands in a rich-text
 * `text` element (or a `plain_text` object), which Slack shows literally: `<!channel>`,
 * `<@U123>`, `<http://x|click>` and `*bold*` stay characters. Mentions, links and emphasis
 * come only from structure (an {@link Inline} run, or the card's `mentions` field).
 */
import type { types } from '@slack/bolt';
import type { Inline, RichText } from '../../core/chat/thread-view.js';
import { personLabel, type Person } from '../../core/people.js';
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

/** A Slack user id (`U…`, or `W…` on Enterprise Grid): what a mention is built from. */
export const SLACK_USER_ID = /^[UW][A-Z0-9]{2,30}$/;

/** The Slack user id a person run can mention: a Slack person with a well-formed id. */
export function slackUserId(p: Person): string | undefined {
  return p.via === 'slack' && SLACK_USER_ID.test(p.id) ? p.id : undefined;
}

/** A person: a Slack person as a mention (Slack shows their current name), anyone else by display name, as text. */
export function person(p: Person): RichTextElement {
  const id = slackUserId(p);
  return id ? { type: 'user', user_id: id } : text(personLabel(p), undefined, true);
}

/** One inline run of a view as rich-text elements. */
export function inline(run: Inline): RichTextElement {
  if (typeof run === 'string') return text(run);
  if ('code' in run) return text(run.code, { code: true });
  if ('strong' in run) return text(run.strong, { bold: true });
  if ('person' in run) return person(run.person);
  return link(run.link.url, run.link.label);
}

/**
 * A paragraph as the plain notification `text` (mrkdwn): text escaped as {@link escapeMrkdwnText}
 * does, a Slack person as `<@U…>` — the one markup a run may produce.
 */
export function mrkdwnText(p: RichText): string {
  return p
    .map((r) => {
      if (typeof r === 'string') return escapeAngles(escapeControl(r));
      if ('person' in r) {
        const id = slackUserId(r.person);
        return id ? `<@${id}>` : escapeAngles(escapeLine(personLabel(r.person)));
      }
      if ('code' in r) return escapeAngles(escapeLine(r.code));
      if ('strong' in r) return escapeAngles(escapeControl(r.strong));
      return escapeAngles(escapeLine(r.link.label));
    })
    .join('');
}

function escapeAngles(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
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
