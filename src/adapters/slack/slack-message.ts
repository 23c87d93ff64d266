/**
 * What a Slack message is made of here, and the two rules every message obeys: the fallback
 * `text` (mrkdwn, shown in notifications) is escaped, and the blocks fit Slack's limits by
 * being cut — with "…" and a link where there is one — never by failing the post.
 */
import type { types } from '@slack/bolt';
import { inlineText, type LinkView, type RichText } from '../../core/chat/thread-view.js';
import { escapeControl } from '../../core/render/escape-text.js';
import { link, mrkdwnText, richTextBlocks, section, text, textLength, type RichTextElement } from './rich-text.js';
import { clip, SLACK_LIMITS } from './slack-limits.js';

/** `chat.postMessage` / `chat.update` / `response_url` content. */
export interface SlackMessage {
  /** Notification and accessibility fallback: mrkdwn, escaped. */
  text: string;
  blocks: types.KnownBlock[];
}

/**
 * Escapes the three characters Slack's mrkdwn gives meaning to (`&`, `<`, `>`): `<!channel>`,
 * `<@U1>` and `<http://x|y>` then read as text. Slack documents no other escapes.
 */
export function escapeMrkdwn(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** A fallback `text` from plain text: control characters visible, mrkdwn escaped, cut. */
export function fallbackText(plainText: string): string {
  // Cut before escaping so an entity is never split in half.
  return escapeMrkdwn(clip(escapeControl(plainText), SLACK_LIMITS.fallback - 1000));
}

/**
 * A fallback `text` from a paragraph of runs: as {@link fallbackText}, with a Slack person as
 * `<@U…>` (the notification names them as the blocks do). Cut between runs, never inside one's markup.
 */
export function fallbackRichText(p: RichText): string {
  const budget = SLACK_LIMITS.fallback - 1000;
  let out = '';
  for (const r of p) {
    const part = typeof r === 'object' && 'person' in r ? mrkdwnText([r]) : escapeMrkdwn(escapeControl(inlineText(r)));
    if (out.length + part.length > budget) {
      out += typeof r === 'object' && 'person' in r ? '…' : escapeMrkdwn(clip(escapeControl(inlineText(r)), Math.max(1, budget - out.length)));
      break;
    }
    out += part;
  }
  return out;
}

export interface FitOptions {
  /** Where the full text lives, linked from the "…" notice when blocks had to be cut. */
  more?: LinkView | undefined;
  /** Blocks at the end that must survive a cut (the card's controls). */
  keepTail?: number;
}

/**
 * Keeps a message within Slack's block count and total text: blocks are kept in order until a
 * limit would be passed, then one rich-text notice says what was cut and links to the rest.
 */
export function fitBlocks(blocks: types.KnownBlock[], opts: FitOptions = {}): types.KnownBlock[] {
  const total = blocks.reduce((n, b) => n + textLength(b), 0);
  if (blocks.length <= SLACK_LIMITS.blocks && total <= SLACK_LIMITS.messageText) return blocks;

  const tailCount = Math.min(opts.keepTail ?? 0, blocks.length);
  const tail = blocks.slice(blocks.length - tailCount);
  const body = blocks.slice(0, blocks.length - tailCount);
  const notice = (omitted: number): types.KnownBlock[] => {
    const runs: RichTextElement[] = [text(`… ${omitted} more block${omitted === 1 ? '' : 's'} cut to fit Slack`)];
    if (opts.more) runs.push(text(' — the rest: '), link(opts.more.url, opts.more.label));
    return richTextBlocks([section(runs)]);
  };
  const reserve = textLength(notice(body.length)) + 50;
  const tailChars = tail.reduce((n, b) => n + textLength(b), 0);
  let budget = SLACK_LIMITS.messageText - reserve - tailChars;
  let room = SLACK_LIMITS.blocks - 1 - tail.length;
  const kept: types.KnownBlock[] = [];
  for (const b of body) {
    const len = textLength(b);
    if (room <= 0 || len > budget) break;
    kept.push(b);
    budget -= len;
    room -= 1;
  }
  const omitted = body.length - kept.length;
  return omitted === 0 ? [...kept, ...tail] : [...kept, ...notice(omitted), ...tail];
}
