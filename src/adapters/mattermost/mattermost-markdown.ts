/**
 * Untrusted text as inert Mattermost markdown. Every string a view carries (alert labels and
 * annotations, catalog text, notes, model output) goes through here before it is put in a post:
 *
 * - `@` becomes `＠` (U+FF20): the server finds mentions in the message's text nodes after
 *   markdown (a backslash escape is text too), so `\@channel` would still notify everyone; code
 *   spans and blocks are never read for mentions, so code keeps its `@`;
 * - every markdown character is backslash-escaped (CommonMark escapes any ASCII punctuation), so
 *   no heading, table, list, quote, emphasis, code fence, link, image or HTML takes effect;
 * - autolinks are defanged (`https[:]//…`, `www[.]…`): Mattermost links bare URLs by itself;
 * - invisible and control characters become visible escapes (core/render/escape-text).
 *
 * Markup comes only from the view's structure, through the helpers below (links only to
 * http(s) URLs, mentions only of names a routing rule configured).
 */
import { personLabel } from '../../core/people.js';
import { escapeControl, escapeLine } from '../../core/render/escape-text.js';
import type { Inline, RichText } from '../../core/chat/thread-view.js';

/** What the server treats as a mention of everyone (never rendered from configuration either). */
const GROUP_MENTIONS = new Set(['channel', 'here', 'all']);
/** A Mattermost username or group name, as a routing rule names one. */
const NAME = /^@?([a-z0-9][a-z0-9._-]{0,63})$/i;

/** Markdown characters (ASCII punctuation that can start or end markup). */
const MD = /[\\`*_{}[\]()#+\-.!|<>~:=&$^"']/g;

function defang(s: string): string {
  return s.replace(/:\/\//g, '[:]//').replace(/\bwww\./gi, (m) => `${m.slice(0, 3)}[.]`);
}

function inert(s: string): string {
  return defang(s)
    .replace(/@/g, '＠')
    .replace(MD, (c) => `\\${c}`);
}

/** Caps a string at `max` code points, with "…". */
export function cap(s: string, max: number): string {
  const cps = Array.from(s);
  return cps.length <= max ? s : `${cps.slice(0, max - 1).join('')}…`;
}

/** One line of untrusted text: newlines shown as `\n`, never a new markdown block. */
export function mdLine(s: string, max = 300): string {
  return inert(escapeLine(cap(s, max)));
}

/**
 * Several lines of untrusted text: each line escaped, the leading blanks of every line after the
 * first dropped (four spaces would make an indented code block) and those of the first kept as
 * one space (it may follow other text on its line), at most `max` code points in all.
 */
export function mdText(s: string, max = 2_000): string {
  return escapeControl(cap(s.replace(/\r\n?/g, '\n').replace(/\t/g, ' '), max))
    .split('\n')
    .map((l, i) => inert(i === 0 ? l.replace(/^ +/, ' ') : l.trimStart()))
    .join('\n');
}

/** A backtick run longer than any in `s`, for a code span or fence around it. */
function fenceFor(s: string, min: number): string {
  let longest = 0;
  for (const m of s.matchAll(/`+/g)) longest = Math.max(longest, m[0].length);
  return '`'.repeat(Math.max(min, longest + 1));
}

/**
 * Inline code: shown as typed, never markup. `@` stays (a command must copy and paste): the
 * server reads mentions from text nodes only, never from code spans or blocks.
 */
export function mdCode(s: string, max = 300): string {
  const body = escapeLine(cap(s, max));
  const f = fenceFor(body, 1);
  return `${f} ${body} ${f}`;
}

/** A fenced code block (a runbook step's command). */
export function mdCodeBlock(s: string, max = 4_000): string[] {
  const body = escapeControl(cap(s.replace(/\r\n?/g, '\n'), max));
  const f = fenceFor(body, 3);
  return [f, ...body.split('\n'), f];
}

/** An http(s) URL safe to put in `[label](url)`, or undefined. */
export function safeUrl(url: string): string | undefined {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return undefined;
  }
  if (u.protocol !== 'https:' && u.protocol !== 'http:') return undefined;
  // The URL parser has percent-encoded spaces and controls; parentheses and angle brackets too.
  return u.href.replace(/[()<>\s]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`);
}

/** A link the bot makes (from a view's structure); its label is text. An unsafe URL is shown as text. */
export function mdLink(label: string, url: string): string {
  const safe = safeUrl(url);
  return safe ? `[${mdLine(label, 120)}](${safe})` : `${mdLine(label, 120)} (${mdLine(url)})`;
}

/** A mention of a configured user or group name; undefined for anything else (and never `@channel`). */
export function mdMention(name: string): string | undefined {
  const m = NAME.exec(name.trim());
  if (!m || GROUP_MENTIONS.has(m[1]!.toLowerCase())) return undefined;
  return `@${m[1]}`;
}

/** A bold run of untrusted text. */
export function mdStrong(s: string, max = 300): string {
  return `**${mdLine(s, max)}**`;
}

function inline(r: Inline): string {
  if (typeof r === 'string') return mdText(r);
  if ('code' in r) return mdCode(r.code);
  if ('strong' in r) return mdStrong(r.strong);
  // A credited person is named, never pinged (a recalled fix's credit line).
  if ('person' in r) return mdLine(`@${personLabel(r.person).replace(/^@+/, '')}`, 120);
  return mdLink(r.link.label, r.link.url);
}

/** A paragraph of inline runs. */
export function mdRich(p: RichText): string {
  return p.map(inline).join('');
}
